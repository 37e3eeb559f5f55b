package pgstore

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/panto-dev/panto/pkg/store"
)

// TestEveryByte is hostile report §11: invalid UTF-8 and NUL in a cwd, a
// model, a provider or an origin were refused by the database (SQLSTATE
// 22021, 22P05) where files keep them. Each is pushed and given back
// exactly, the text columns readable beside.
func TestEveryByte(t *testing.T) {
	u := testDB(t)
	p := open(t, u)
	ctx := context.Background()
	id := "01a232e4-4db3-7556-907c-f9d5fda4e0ac"
	src := `{"type":"session","version":1,"id":"` + id + `","timestamp":"2026-04-25T17:40:15.990Z","cwd":"/caf` + "\xe9" + `/n\u0000ul","origin":{"agent":"claude","id":"abc\u0000def","path":"/x` + "\xff" + `"}}` + "\n" +
		`{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"2026-04-25T14:00:01.000Z","provider":"anth` + "\xff" + `","model":"m\u0000x","message":{"role":"user","content":[{"type":"text","text":"A"}]}}` + "\n" +
		`{"type":"message","id":"bbbbbbbb","parentId":"aaaaaaaa","timestamp":"2026-04-25T14:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"B"}],"provider":"anth` + "\xff" + `","model":"m\u0000x","stopReason":"stop","usage":{"input":1,"output":1},"responseId":"resp_1"}}` + "\n"
	if _, err := p.Receive(ctx, strings.NewReader(src)); err != nil {
		t.Fatalf("push: %v", err)
	}
	if got := readAll(t, p, id); string(got) != src {
		t.Fatalf("given back\n%q\nwant\n%q", got, src)
	}
	// The stamp at the leaf, exactly: an append stamps its user entry with it.
	res, err := p.Append(ctx, id, []store.Msg{{Raw: session.TextMessage("user", "more"), Role: "user"}}, store.AppendOptions{AllowEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	if c := session.Classify(res.Lines[:len(res.Lines)-1]); c.Provider != "anth\xff" || c.Model != "m\x00x" {
		t.Fatalf("append stamped %q/%q", c.Provider, c.Model)
	}
	// Listed by its exact cwd.
	cwd := "/caf\xe9/n\x00ul"
	list, err := p.List(ctx, cwd, false, nil)
	if err != nil || len(list) != 1 || list[0].Cwd != cwd {
		t.Fatalf("list of its cwd: %+v %v", list, err)
	}
	if got, err := p.Resolve(ctx, cwd, false, "01a2"); err != nil || got != id {
		t.Fatalf("resolve in its cwd: %q %v", got, err)
	}
	// The columns a team reads.
	c, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var text, agent, oid, model, response string
	var origin *string
	if err := c.QueryRow(ctx, `SELECT s.cwd, s.origin::text, s.origin_agent, s.origin_id, e.model, e.response FROM panto_sessions s JOIN panto_entries e ON e.session = s.id AND e.seq = 2`).Scan(&text, &origin, &agent, &oid, &model, &response); err != nil {
		t.Fatal(err)
	}
	if text != "/caf\uFFFD/n\uFFFDul" || origin != nil || agent != "claude" || oid != "abc\uFFFDdef" || model != "m\uFFFDx" || response != "resp_1" {
		t.Fatalf("columns: %q %v %q %q %q %q", text, origin, agent, oid, model, response)
	}
	// An append from a directory whose name is Latin-1 creates its session.
	nid, _ := session.NewSessionID()
	if _, err := p.Append(ctx, nid, pair("latin"), store.AppendOptions{Cwd: "/t/caf\xe9"}); err != nil {
		t.Fatalf("append from a Latin-1 cwd: %v", err)
	}
	if list, err := p.List(ctx, "/t/caf\xe9", false, nil); err != nil || len(list) != 1 {
		t.Fatalf("list of the Latin-1 cwd: %+v %v", list, err)
	}
}

// TestMigrateToExact: a database of schema version 2 is taken to 3: its
// rows keep what they had, the exact cwd and the origin's agent and id
// filled in, the response of an imported reply read from its line.
func TestMigrateToExact(t *testing.T) {
	u := testDB(t)
	ctx := context.Background()
	c, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, `CREATE TABLE panto_schema (version integer NOT NULL);`+schema+migrations[2]+`;INSERT INTO panto_schema VALUES (2)`); err != nil {
		t.Fatal(err)
	}
	id := "01a232e4-4db3-7556-907c-f9d5fda4e0ac"
	header := `{"type":"session","version":1,"id":"` + id + `","timestamp":"2026-04-25T17:40:15.990Z","cwd":"/p","origin":{"agent":"claude","id":"abc","path":"/x"}}`
	reply := `{"type":"message","id":"bbbbbbbb","parentId":null,"timestamp":"2026-04-25T14:00:02.000Z","message":{"role":"assistant","content":[],"provider":"anthropic","model":"m","stopReason":"stop","usage":{"input":1,"output":1},"responseId":"resp_9"}}`
	if _, err := c.Exec(ctx, `INSERT INTO panto_sessions (id, cwd, created, origin, header, leaf, leaf_provider, leaf_model, entries, messages, bytes) VALUES ($1, '/p', now(), $2, $3, 'bbbbbbbb', 'anthropic', 'm', 1, 1, 10)`, id, `{"agent":"claude","id":"abc","path":"/x"}`, []byte(header)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, `INSERT INTO panto_entries (session, seq, id, role, type, valid, crc, line) VALUES ($1, 1, 'bbbbbbbb', 'assistant', 'message', true, 0, $2)`, id, []byte(reply)); err != nil {
		t.Fatal(err)
	}
	p := open(t, u)
	var v int
	var cwd []byte
	var agent, oid, response string
	var provider []byte
	if err := p.conn.QueryRow(ctx, `SELECT (SELECT version FROM panto_schema), s.cwd_bytes, s.origin_agent, s.origin_id, s.leaf_provider, e.response FROM panto_sessions s JOIN panto_entries e ON e.session = s.id`).Scan(&v, &cwd, &agent, &oid, &provider, &response); err != nil {
		t.Fatal(err)
	}
	if v != SchemaVersion || string(cwd) != "/p" || agent != "claude" || oid != "abc" || string(provider) != "anthropic" || response != "resp_9" {
		t.Fatalf("after the migration: %d %q %q %q %q %q", v, cwd, agent, oid, provider, response)
	}
}

// TestSchemaTable: an emptied panto_schema is refused with a line that
// says so (it said "no rows in result set"); of two rows the largest is
// the version, whatever their order.
func TestSchemaTable(t *testing.T) {
	u := testDB(t)
	ctx := context.Background()
	p := open(t, u)
	if _, err := p.conn.Exec(ctx, `DELETE FROM panto_schema`); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, u); err == nil || !strings.Contains(err.Error(), "panto_schema holds no version") {
		t.Fatalf("an empty panto_schema: %v", err)
	}
	if _, err := p.conn.Exec(ctx, `INSERT INTO panto_schema VALUES ($1), (1)`, SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, u); !errors.Is(err, store.ErrNewerVersion) || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("rows %d and 1: %v", SchemaVersion+1, err)
	}
}
