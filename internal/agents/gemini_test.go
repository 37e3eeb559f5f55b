package agents

import (
	"encoding/json"
	"strconv"
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

// countingReader counts the bytes read through ReadAt.
type countingReader struct {
	r *strings.Reader
	n int64
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n += int64(n)
	return n, err
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// TestGeminiChatOnOneLine: a whole chat written on one line (jq -c, a
// re-serialising tool) is read in a bounded number of passes over it. Each
// of its messages read and parsed the whole line again: 10,000 messages
// (11 MB) took 100 s in list --all, a chat of 200 MB hours.
func TestGeminiChatOnOneLine(t *testing.T) {
	const n = 2000
	var msgs []map[string]any
	for i := range n {
		msgs = append(msgs, map[string]any{"id": "u" + strconv.Itoa(i), "timestamp": "2026-03-01T10:00:00.000Z", "type": "user", "content": "question " + strconv.Itoa(i)},
			map[string]any{"id": "g" + strconv.Itoa(i), "timestamp": "2026-03-01T10:00:01.000Z", "type": "gemini", "content": "answer " + strconv.Itoa(i), "model": "gemini-2.5-flash",
				"tokens": map[string]int{"input": 100, "output": 10, "cached": 40, "thoughts": 5, "tool": 0, "total": 115}})
	}
	b, _ := json.Marshal(map[string]any{"sessionId": "aaaaaaaa-1111-4222-8333-444444444444", "projectHash": "p", "startTime": "2026-03-01T10:00:00.000Z",
		"lastUpdated": "2026-03-01T10:00:00.000Z", "messages": msgs, "kind": "main"})
	b = append(b, '\n')
	cr := &countingReader{r: strings.NewReader(string(b))}
	replies, texts := 0, 0
	_, st, err := Read(Source{Path: "session-x.json", R: cr, Size: int64(len(b))}, Gemini, Options{Content: true}, func(*Header) error { return nil },
		func(e *Entry) error {
			if e.Reply != nil {
				replies++
			}
			if strings.Contains(string(e.Body), "answer 1999") || strings.Contains(string(e.Body), "question 0") {
				texts++
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if replies != n || texts != 2 || st.Torn != 0 || len(st.Corrupt) != 0 {
		t.Fatalf("%d replies (want %d), first and last text %d of 2, torn %d, corrupt %v", replies, n, texts, st.Torn, st.Corrupt)
	}
	if passes := cr.n / int64(len(b)); passes > 4 {
		t.Errorf("read the %d-byte line %d times over for %d messages, want a few passes", len(b), passes, 2*n)
	}
}
