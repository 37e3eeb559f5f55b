package agents

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
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

// TestReadAhead: readAhead gives the bytes io.ReaderAt gives, read in
// the file's order, back, across a window's end, over half a window, to
// the file's end; past the end, an error, never a window's stale bytes.
func TestReadAhead(t *testing.T) {
	file := make([]byte, 5*aheadSize+123)
	for i := range file {
		file[i] = byte(i * 7)
	}
	r := bytes.NewReader(file)
	a := readAhead{r: r}
	rng := rand.New(rand.NewPCG(3, 4))
	off := int64(0)
	for i := range 3000 {
		var n int
		switch i % 5 {
		case 0: // the next record, small
			n = 1 + rng.IntN(300)
		case 1: // across the window's end
			n = aheadSize/2 - rng.IntN(10)
		case 2: // over half a window: read alone
			n = aheadSize/2 + 1 + rng.IntN(aheadSize)
		case 3: // back, somewhere before
			off = rng.Int64N(off + 1)
			n = 1 + rng.IntN(2000)
		case 4: // to the very end
			n = 1 + rng.IntN(100)
			off = int64(len(file) - n)
		}
		if off+int64(n) > int64(len(file)) {
			off = 0
		}
		b := make([]byte, n)
		if err := a.readAt(b, off); err != nil && err != io.EOF {
			t.Fatalf("%d: %d bytes at %d: %v", i, n, off, err)
		}
		if !bytes.Equal(b, file[off:off+int64(n)]) {
			t.Fatalf("%d: %d bytes at %d: not the file's", i, n, off)
		}
		off += int64(n)
	}
	// Past the end (a file cut after it was read once): an error.
	b := make([]byte, 200)
	if err := a.readAt(b, int64(len(file)-100)); err == nil {
		t.Fatal("200 bytes 100 before the end: no error")
	}
	if err := a.readAt(b[:50], int64(len(file)-100)); err != nil || !bytes.Equal(b[:50], file[len(file)-100:len(file)-50]) {
		t.Fatalf("after a short read: %v", err)
	}
}
