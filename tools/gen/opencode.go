package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	_ "modernc.org/sqlite"
)

// writeOpenCode writes an opencode.db at path holding about size bytes of
// JSON in its message and part rows, with the tables of schema (panto's
// testdata/opencode/schema.sql): sessions of 20 to 80 exchanges, each a
// prompt (a text part) and a reply with a step-start, a reasoning, a text,
// a completed tool call with its output and a step-finish with its usage,
// as OpenCode 1.16 writes them.
func writeOpenCode(path, schema string, size int64, r *rand.Rand) error {
	ddl, err := os.ReadFile(schema)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	os.Remove(path)
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Exec(string(ddl)); err != nil {
		return err
	}
	if _, err := db.Exec(`INSERT INTO project VALUES ('prj1', '/proj', 'git', 'proj', 1780000000000, 1780000000000, '[]')`); err != nil {
		return err
	}
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	// OpenCode writes an object's keys in its own order (a part's type
	// first, but a step-finish's reason before it): kv pairs, in order.
	js := func(kv ...any) string {
		b := []byte{'{'}
		for i := 0; i < len(kv); i += 2 {
			if i > 0 {
				b = append(b, ',')
			}
			k, _ := json.Marshal(kv[i])
			v, _ := json.Marshal(kv[i+1])
			b = append(append(append(b, k...), ':'), v...)
		}
		return string(append(b, '}'))
	}
	t := int64(1780000000000)
	var written int64
	for s := 0; written < size; s++ {
		sid := fmt.Sprintf("ses_%012x%s", r.Uint64()&0xffffffffffff, string("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[r.IntN(52)])+fmt.Sprintf("%013d", s))
		if _, err := tx.Exec(`INSERT INTO session (id, project_id, directory, title, version, time_created, time_updated) VALUES (?, 'prj1', '/proj', ?, 'v1.16.0', ?, ?)`,
			sid, text(r, 6), t, t); err != nil {
			return err
		}
		for x := range 20 + r.IntN(60) {
			t += int64(1000 + r.IntN(30000))
			uid, aid := fmt.Sprintf("msg_%s_%du", sid[4:], x), fmt.Sprintf("msg_%s_%da", sid[4:], x)
			user := js("role", "user", "time", line{"created": t}, "agent", "build", "model", line{"providerID": "anthropic", "modelID": "claude-sonnet-4-5"})
			in, out, reason := int64(10+r.IntN(3000)), int64(10+r.IntN(2000)), int64(r.IntN(500))
			cr, cw := int64(r.IntN(200000)), int64(r.IntN(5000))
			tokens := line{"total": in + out + reason + cr + cw, "input": in, "output": out, "reasoning": reason, "cache": line{"read": cr, "write": cw}}
			asst := js("parentID", uid, "role", "assistant", "mode", "build", "agent", "build", "path", line{"cwd": "/proj", "root": "/proj"}, "cost", 0,
				"tokens", tokens, "modelID", "claude-sonnet-4-5", "providerID", "anthropic", "time", line{"created": t + 1, "completed": t + 900}, "finish", "tool-calls")
			parts := [][2]string{
				{uid, js("type", "text", "text", text(r, 40+r.IntN(400)))},
				{aid, js("type", "step-start")},
				{aid, js("type", "reasoning", "text", text(r, 100+r.IntN(600)), "time", line{"start": t, "end": t + 300})},
				{aid, js("type", "text", "text", text(r, 20+r.IntN(600)), "time", line{"start": t + 300, "end": t + 400})},
				{aid, js("type", "tool", "tool", "bash", "callID", fmt.Sprintf("toolu_%016x", r.Uint64()),
					"state", line{"status": "completed", "input": line{"command": text(r, 12)}, "output": text(r, 100+r.IntN(4000)), "title": text(r, 4),
						"metadata": line{"exit": 0}, "time": line{"start": t + 400, "end": t + 800}})},
				{aid, js("reason", "tool-calls", "type", "step-finish", "tokens", tokens, "cost", 0)},
			}
			for _, m := range [][3]string{{uid, user, ""}, {aid, asst, ""}} {
				if _, err := tx.Exec(`INSERT INTO message VALUES (?, ?, ?, ?, ?)`, m[0], sid, t, t, m[1]); err != nil {
					return err
				}
				written += int64(len(m[1]))
			}
			for k, p := range parts {
				if _, err := tx.Exec(`INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)`, fmt.Sprintf("prt_%s_%d_%d", sid[4:], x, k), p[0], sid, t, t, p[1]); err != nil {
					return err
				}
				written += int64(len(p[1]))
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if _, err := db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return err
	}
	return db.Close()
}
