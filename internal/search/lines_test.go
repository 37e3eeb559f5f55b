package search

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/panto-dev/panto/internal/agents"
)

// TestLineNumbers: an entry with no id of its own (a Codex message) is
// named by its line's number, counted only when a hit needs it: the
// right number whatever the buffer holds when the hit comes (the lines
// before it in an earlier buffer, read again), after a line too long to
// hold (read as a stream, never read again to count it), and for a hit
// in such a line.
func TestLineNumbers(t *testing.T) {
	ri := func(n int, role, text string) string {
		return js(obj{"timestamp": fmt.Sprintf("2026-11-02T10:%02d:%02d.000Z", n/60%60, n%60), "type": "response_item", "payload": obj{"type": "message", "role": role, "content": arr{obj{"type": "input_text", "text": text}}}})
	}
	for _, c := range []struct {
		name          string
		buf, max, big int
	}{
		{"one buffer", bufSize, maxLine, 0},
		{"small buffers", 4 << 10, 16 << 10, 0},
		{"small buffers and long lines", 4 << 10, 16 << 10, 40 << 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func(b, m int) { bufSize, maxLine = b, m }(bufSize, maxLine)
			bufSize, maxLine = c.buf, c.max
			cl := codexLines("x")
			lines := append([]string{}, cl[:2]...)
			want := map[string]bool{}
			for n := len(lines) + 1; n <= 400; n++ {
				text := fmt.Sprintf("filler %d %s", n, strings.Repeat("abc ", n*7%900))
				switch {
				case c.big > 0 && n%97 == 0: // a long line, a hit at its end
					text = strings.Repeat("long ", c.big/5) + fmt.Sprintf("zqline %d", n)
					want[lineID(n)] = true
				case c.big > 0 && n%89 == 0: // a long line, no hit
					text = strings.Repeat("long ", c.big/5)
				case n%37 == 0:
					text = fmt.Sprintf("zqline %d ", n) + text
					want[lineID(n)] = true
				}
				lines = append(lines, ri(n, "user", text))
			}
			p := filepath.Join(t.TempDir(), "rollout-2026-11-02T10-00-00-"+codexID+".jsonl")
			if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			hits, _ := search(t, []File{{Path: p}}, []string{"zqline"}, nil, Smart, Options{})
			got := map[string]bool{}
			for _, h := range hits {
				n := strings.TrimPrefix(h.Entry, "line ")
				if !strings.Contains(h.Snippet, "zqline "+n) {
					t.Errorf("hit %q in %q: the line says another number", h.Entry, h.Snippet)
				}
				got[h.Entry] = true
			}
			if len(got) != len(want) || len(hits) != len(want) {
				t.Errorf("%d hits on %v, want one on each of %v", len(hits), got, want)
			}
		})
	}
}

// TestLastIndex: lastIndex finds what bytes.LastIndex finds, a key
// across a window's edge too.
func TestLastIndex(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		key := []byte(`"toolu_` + strings.Repeat("x", rnd.IntN(30)) + `"`)
		b := make([]byte, rnd.IntN(40<<10))
		for i := range b {
			b[i] = "ab\"x_tolu"[rnd.IntN(9)]
		}
		for range rnd.IntN(4) {
			if at := rnd.IntN(len(b) + 1); at+len(key) <= len(b) {
				copy(b[at:], key)
			}
		}
		if got, want := lastIndex(b, key), bytes.LastIndex(b, key); got != want {
			t.Fatalf("lastIndex of %q in %d bytes = %d, want %d", key, len(b), got, want)
		}
	}
	for _, edge := range []int{8 << 10, 16<<10 - 3, 100} {
		b := bytes.Repeat([]byte("a"), 40<<10)
		key := []byte(`"toolu_abc"`)
		for d := -len(key); d <= len(key); d++ {
			c := append([]byte{}, b...)
			at := len(c) - edge + d
			copy(c[at:], key)
			if got := lastIndex(c, key); got != at {
				t.Fatalf("key at %d (end-%d%+d): lastIndex %d", at, edge, d, got)
			}
		}
	}
	if lastIndex([]byte("ab"), []byte("abc")) != -1 || lastIndex(nil, []byte("a")) != -1 {
		t.Fatal("a key longer than b found")
	}
}

// TestClaudeLineEarlyStop: a Claude Code line is read up to the fields
// it needs: a compaction's mark after everything else (even after the
// tool result's copy) still makes its summary a system text, the word in
// a text is no mark, the fields in any order are read, and of a key said
// twice the first counts (as gjson's Get).
func TestClaudeLineEarlyStop(t *testing.T) {
	head := `"uuid":"u1","timestamp":"2026-11-05T00:00:00.000Z","cwd":"/p","sessionId":"s"`
	for _, c := range []struct {
		name, line string
		role, text string
	}{
		{"a compaction marked last", `{` + head + `,"type":"user","message":{"role":"user","content":"the summary"},"toolUseResult":{"stdout":"x"},"isCompactSummary":true}`, "system", "the summary"},
		{"the mark's name in a text", `{` + head + `,"type":"user","message":{"role":"user","content":"about \"isCompactSummary\" keys"},"toolUseResult":{"stdout":"x"}}`, "user", `about "isCompactSummary" keys`},
		{"type after the message", `{"message":{"role":"assistant","content":[{"type":"text","text":"hi"}]},` + head + `,"type":"assistant"}`, "assistant", "hi"},
		{"no cwd", `{"uuid":"u1","type":"user","message":{"role":"user","content":"hello"},"toolUseResult":{}}`, "user", "hello"},
		{"a message said twice", `{` + head + `,"type":"user","message":{"role":"user","content":"first"},"message":{"role":"user","content":"second"}}`, "user", "first"},
		{"a progress line", `{` + head + `,"type":"progress","data":{"message":{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"sub"}]}}},"toolUseID":"t"}`, "assistant", "sub"},
	} {
		var e Entry
		Extract(agents.Claude, []byte(c.line), &e)
		if len(e.Pieces) != 1 || e.Pieces[0].Role != c.role || e.Pieces[0].Text != c.text {
			t.Errorf("%s: pieces %+v, want one %s piece %q", c.name, e.Pieces, c.role, c.text)
		}
	}
}
