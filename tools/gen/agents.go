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

// writeGemini writes about size bytes of Gemini CLI chats under
// dir/.gemini/tmp/<project>/chats: the JSON Lines form of v0.39+ (each
// reply written twice, first with its tool calls, then with their results
// and its tokens, as Gemini CLI re-appends a message that changes), or
// with whole the pretty-printed session-*.json of before.
func writeGemini(dir string, size int64, whole bool, r *rand.Rand) error {
	t := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for s, written := 0, int64(0); written < size; s++ {
		sid := fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", r.Uint32(), s&0xffff, r.IntN(4096), r.IntN(4096), r.Uint64()&0xffffffffffff)
		chats := filepath.Join(dir, ".gemini", "tmp", fmt.Sprintf("proj%d", s%20), "chats")
		if err := os.MkdirAll(chats, 0o700); err != nil {
			return err
		}
		name := filepath.Join(chats, "session-"+t.Format("2006-01-02T15-04")+"-"+sid[:8])
		meta := line{"sessionId": sid, "projectHash": fmt.Sprintf("%064x", s), "startTime": t.Format(time.RFC3339Nano), "lastUpdated": t.Format(time.RFC3339Nano), "kind": "main"}
		var msgs []line
		var n int64
		target := int64(200<<10 + r.IntN(2<<20))
		for turn := 0; n < target; turn++ {
			step := func() string {
				t = t.Add(time.Duration(500+r.IntN(20000)) * time.Millisecond)
				return t.Format("2006-01-02T15:04:05.000Z")
			}
			u := line{"id": fmt.Sprintf("%s-u%d", sid[:8], turn), "timestamp": step(), "type": "user", "content": text(r, 40+r.IntN(400))}
			msgs = append(msgs, u)
			for k := range 1 + r.IntN(4) {
				id := fmt.Sprintf("%s-g%d-%d", sid[:8], turn, k)
				call := line{"id": fmt.Sprintf("run_shell_command-%d", r.Uint64()), "name": "run_shell_command", "args": line{"command": text(r, 30)}, "status": "executing", "timestamp": step()}
				g := line{"id": id, "timestamp": step(), "type": "gemini", "content": text(r, 20+r.IntN(600)), "model": "gemini-2.5-flash",
					"thoughts":  []line{{"subject": text(r, 20), "description": text(r, 100+r.IntN(300)), "timestamp": step()}},
					"toolCalls": []line{call}}
				if !whole {
					msgs = append(msgs, copyLine(g))
				}
				call["result"] = []line{{"functionResponse": line{"id": call["id"], "name": "run_shell_command", "response": line{"output": text(r, 100+r.IntN(4000))}}}}
				call["status"] = "success"
				in := int64(10000 + r.IntN(200000))
				cached := in * int64(r.IntN(90)) / 100
				out, th := int64(10+r.IntN(2000)), int64(r.IntN(500))
				g["tokens"] = line{"input": in, "output": out, "cached": cached, "thoughts": th, "tool": 0, "total": in + out + th}
				msgs = append(msgs, g)
			}
			n = 0
			for _, m := range msgs {
				b, _ := json.Marshal(m)
				n += int64(len(b) + 1)
			}
		}
		var err error
		if whole {
			meta["messages"] = msgs
			var b []byte
			b, err = json.MarshalIndent(meta, "", "  ")
			if err == nil {
				err = os.WriteFile(name+".json", b, 0o600)
			}
			written += int64(len(b))
		} else {
			err = writeLines(name+".jsonl", append([]line{meta}, msgs...), &written)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func copyLine(l line) line {
	b, _ := json.Marshal(l)
	var c line
	json.Unmarshal(b, &c)
	return c
}

func writeLines[L any](path string, ls []L, written *int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for _, l := range ls {
		b, _ := json.Marshal(l)
		w.Write(b)
		w.WriteByte('\n')
		*written += int64(len(b) + 1)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// copilotLine is an event of events.jsonl, its keys in Copilot CLI's order
// (the type first, as every real file writes it).
type copilotLine struct {
	Type      string  `json:"type"`
	Data      line    `json:"data"`
	ID        string  `json:"id"`
	Timestamp string  `json:"timestamp"`
	ParentID  *string `json:"parentId"`
}

// writeCopilot writes about size bytes of GitHub Copilot CLI sessions
// under dir/session-state/<id>/events.jsonl: prompts, turns, replies with
// their output tokens and tool requests, the tools' start and completion,
// and a shutdown with the run's totals by model.
func writeCopilot(dir string, size int64, r *rand.Rand) error {
	t := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	for s, written := 0, int64(0); written < size; s++ {
		sid := fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", r.Uint32(), s&0xffff, r.IntN(4096), r.IntN(4096), r.Uint64()&0xffffffffffff)
		d := filepath.Join(dir, "session-state", sid)
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
		var ls []copilotLine
		var n int64
		ev := func(typ string, data line) {
			t = t.Add(time.Duration(50+r.IntN(5000)) * time.Millisecond)
			l := copilotLine{Type: typ, Data: data, ID: fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", r.Uint32(), r.IntN(65536), r.IntN(4096), r.IntN(4096), r.Uint64()&0xffffffffffff),
				Timestamp: t.Format("2006-01-02T15:04:05.000Z")}
			b, _ := json.Marshal(l)
			n += int64(len(b) + 1)
			ls = append(ls, l)
		}
		ev("session.start", line{"sessionId": sid, "version": 1, "producer": "copilot-agent", "copilotVersion": "1.0.5", "startTime": t.Format(time.RFC3339Nano), "context": line{"cwd": "/home/u/proj"}})
		ev("session.model_change", line{"newModel": "claude-sonnet-4.5"})
		var out, in int64
		target := int64(200<<10 + r.IntN(2<<20))
		for turn := 0; n < target; turn++ {
			ev("user.message", line{"content": text(r, 40+r.IntN(400)), "transformedContent": text(r, 100)})
			for k := range 1 + r.IntN(4) {
				ev("assistant.turn_start", line{"turnId": fmt.Sprint(k)})
				call := fmt.Sprintf("call_%x", r.Uint64())
				o := int64(10 + r.IntN(2000))
				out += o
				in += int64(10000 + r.IntN(200000))
				ev("assistant.message", line{"messageId": fmt.Sprintf("m%d-%d", turn, k), "model": "claude-sonnet-4.5", "content": text(r, 20+r.IntN(600)),
					"reasoningText": text(r, 100+r.IntN(300)), "toolRequests": []line{{"toolCallId": call, "name": "bash", "arguments": line{"command": text(r, 30)}, "type": "function"}},
					"outputTokens": o, "apiCallId": fmt.Sprintf("api-%x", r.Uint64())})
				ev("tool.execution_start", line{"toolCallId": call, "toolName": "bash", "arguments": line{"command": "ls"}})
				ev("tool.execution_complete", line{"toolCallId": call, "success": true, "result": line{"content": text(r, 100+r.IntN(4000))}})
				ev("assistant.turn_end", line{"turnId": fmt.Sprint(k)})
			}
		}
		ev("session.shutdown", line{"shutdownType": "routine", "modelMetrics": line{"claude-sonnet-4.5": line{"requests": line{"count": 1}, "usage": line{"inputTokens": in, "outputTokens": out, "cacheReadTokens": in * 7 / 10, "cacheWriteTokens": in / 10, "reasoningTokens": 0}}}})
		if err := writeLines(filepath.Join(d, "events.jsonl"), ls, &written); err != nil {
			return err
		}
	}
	return nil
}
