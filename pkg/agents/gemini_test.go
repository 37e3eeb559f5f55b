package agents

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestGeminiDocAnyOrder is a whole-file chat whose members are written in
// another order than Gemini CLI's (sorted, as a re-serialising tool writes
// them: messages before sessionId) with a list longer than the look the
// format is told from: told by its first message, read with its own id,
// every reply counted. It was "not a session log".
func TestGeminiDocAnyOrder(t *testing.T) {
	var msgs []map[string]any
	for i := range 200 {
		msgs = append(msgs, map[string]any{"id": "u" + string(rune('a'+i%26)) + strings.Repeat("x", i), "timestamp": "2026-03-01T10:00:00.000Z", "type": "user", "content": strings.Repeat("words ", 200)},
			map[string]any{"id": "g" + strings.Repeat("x", i), "timestamp": "2026-03-01T10:00:01.000Z", "type": "gemini", "content": "ok", "model": "gemini-2.5-flash",
				"tokens": map[string]int{"input": 100, "output": 10, "cached": 40, "thoughts": 5, "tool": 0, "total": 115}})
	}
	b, _ := json.MarshalIndent(map[string]any{"sessionId": "aaaaaaaa-1111-4222-8333-444444444444", "projectHash": "p", "startTime": "2026-03-01T10:00:00.000Z",
		"lastUpdated": "2026-03-01T10:00:00.000Z", "messages": msgs, "kind": "main"}, "", "  ")
	if i, j := strings.Index(string(b), `"messages"`), strings.Index(string(b), `"sessionId"`); i > j || j < headLook {
		t.Fatalf("the fixture is not what it is for: messages at %d, sessionId at %d", i, j)
	}
	got := convert(t, "chat.json", b)
	if id := got.header.Get("origin.id").Str; id != "aaaaaaaa-1111-4222-8333-444444444444" {
		t.Errorf("origin id %q", id)
	}
	if n := got.stats.Counts["gemini replies"]; n != 200 {
		t.Errorf("%d replies read, want 200", n)
	}
	if got.stats.Torn != 0 || len(got.stats.Corrupt) != 0 {
		t.Errorf("torn %d, corrupt %v", got.stats.Torn, got.stats.Corrupt)
	}
}
