package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"
)

// writeClaude writes about size bytes of Claude Code transcripts under
// dir/projects, as Claude Code 2.1 writes them: per session a file of
// prompts, responses written as one copy per content block (thinking,
// text, tool use) whose usage snapshot grows to the final one on the last
// copy, tool results, progress lines, and a subagents/ file whose replies
// the parent also records in progress lines.
func writeClaude(dir string, size int64, r *rand.Rand) error {
	t := time.Date(2026, 2, 1, 9, 0, 0, 0, time.UTC)
	for s, written := 0, int64(0); written < size; s++ {
		sid := fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", r.Uint32(), s&0xffff, r.IntN(4096), r.IntN(4096), r.Uint64()&0xffffffffffff)
		proj := filepath.Join(dir, "projects", fmt.Sprintf("-home-u-proj%d", s%20))
		if err := os.MkdirAll(filepath.Join(proj, sid, "subagents"), 0o700); err != nil {
			return err
		}
		n, err := claudeSession(filepath.Join(proj, sid+".jsonl"), filepath.Join(proj, sid, "subagents", "agent-a"+sid[:8]+".jsonl"), sid, int64(200<<10+r.IntN(2<<20)), &t, r)
		if err != nil {
			return err
		}
		written += n
	}
	return nil
}

// line is one transcript line; fields in Claude Code's order.
type line map[string]any

func claudeSession(path, subPath, sid string, size int64, t *time.Time, r *rand.Rand) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var n int64
	put := func(w *bufio.Writer, l line) {
		b, _ := json.Marshal(l)
		w.Write(b)
		w.WriteByte('\n')
		n += int64(len(b) + 1)
	}
	base := func(typ, uuid string, parent any) line {
		*t = t.Add(time.Duration(500+r.IntN(20000)) * time.Millisecond)
		return line{"parentUuid": parent, "isSidechain": false, "userType": "external", "cwd": "/home/u/proj", "sessionId": sid,
			"version": "2.1.30", "gitBranch": "main", "type": typ, "uuid": uuid, "timestamp": t.Format("2006-01-02T15:04:05.000Z")}
	}
	var parent any
	var sub []line
	for turn := 0; n < size; turn++ {
		u := fmt.Sprintf("%s-u%d", sid[:8], turn)
		l := base("user", u, parent)
		l["message"] = map[string]any{"role": "user", "content": text(r, 100+r.IntN(600))}
		put(w, l)
		parent = u
		usage := map[string]any{"input_tokens": 3 + r.IntN(10), "cache_creation_input_tokens": 0, "cache_read_input_tokens": 10000 + r.IntN(90000),
			"cache_creation": map[string]any{"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}, "output_tokens": 1}
		if w1 := r.IntN(3000); w1 > 0 {
			usage["cache_creation_input_tokens"] = w1
			usage["cache_creation"] = map[string]any{"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": w1}
		}
		blocks := []any{
			map[string]any{"type": "thinking", "thinking": text(r, 200+r.IntN(800)), "signature": text(r, 200)},
			map[string]any{"type": "text", "text": text(r, 100+r.IntN(1000))},
			map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%s_%d", sid[:8], turn), "name": "Bash", "input": map[string]any{"command": "ls -la src/" + text(r, 10)}},
		}
		mid, rid := fmt.Sprintf("msg_%s_%d", sid[:8], turn), fmt.Sprintf("req_%s_%d", sid[:8], turn)
		final := 50 + r.IntN(2000)
		for k, b := range blocks {
			a := fmt.Sprintf("%s-a%d-%d", sid[:8], turn, k)
			out, stop := 10, any(nil)
			if k == len(blocks)-1 {
				out, stop = final, "tool_use"
			}
			usage["output_tokens"] = out
			l := base("assistant", a, parent)
			l["message"] = map[string]any{"id": mid, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
				"content": []any{b}, "stop_reason": stop, "stop_sequence": nil, "usage": usage}
			l["requestId"] = rid
			put(w, l)
			parent = a
		}
		res := fmt.Sprintf("%s-r%d", sid[:8], turn)
		l = base("user", res, parent)
		l["message"] = map[string]any{"role": "user", "content": []any{map[string]any{"tool_use_id": fmt.Sprintf("toolu_%s_%d", sid[:8], turn), "type": "tool_result", "content": text(r, 500+r.IntN(4000)), "is_error": false}}}
		l["toolUseResult"] = map[string]any{"stdout": "…", "stderr": "", "interrupted": false}
		put(w, l)
		parent = res
		if turn%10 == 5 { // a subagent's reply: in its file and in a progress line
			msg := map[string]any{"id": fmt.Sprintf("msg_sub_%s_%d", sid[:8], turn), "type": "message", "role": "assistant", "model": "claude-haiku-4-5-20251001",
				"content": []any{map[string]any{"type": "text", "text": text(r, 300)}}, "stop_reason": "end_turn", "usage": map[string]any{"input_tokens": 500 + r.IntN(500), "output_tokens": 100 + r.IntN(300)}}
			sr := fmt.Sprintf("req_sub_%s_%d", sid[:8], turn)
			p := base("progress", fmt.Sprintf("%s-p%d", sid[:8], turn), parent)
			p["data"] = map[string]any{"type": "agent_progress", "message": map[string]any{"type": "assistant", "requestId": sr, "timestamp": p["timestamp"], "message": msg}}
			put(w, p)
			parent = p["uuid"]
			s := base("assistant", fmt.Sprintf("%s-s%d", sid[:8], turn), nil)
			s["isSidechain"], s["agentId"], s["message"], s["requestId"] = true, "a"+sid[:8], msg, sr
			sub = append(sub, s)
		} else {
			p := base("progress", fmt.Sprintf("%s-h%d", sid[:8], turn), parent)
			p["data"] = map[string]any{"type": "hook_progress", "hookEvent": "PostToolUse", "hookName": "PostToolUse:Bash"}
			put(w, p)
			parent = p["uuid"]
		}
	}
	if err := w.Flush(); err != nil {
		return 0, err
	}
	if err := f.Close(); err != nil {
		return 0, err
	}
	sf, err := os.Create(subPath)
	if err != nil {
		return 0, err
	}
	sw := bufio.NewWriter(sf)
	for _, l := range sub {
		put(sw, l)
	}
	if err := sw.Flush(); err != nil {
		return 0, err
	}
	return n, sf.Close()
}
