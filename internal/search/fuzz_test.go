package search

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/panto-dev/panto/internal/agents"
)

// FuzzFound: a needle taken from a text is found in the line that holds
// the text, however the line's writer escaped it (Go's encoder: < > &
// and U+2028 escaped; every non-ASCII character as \uXXXX; a line read
// whole or as a stream), in either case mode that should match it. The
// prefilter must never drop such a line.
func FuzzFound(f *testing.F) {
	f.Add("say \"hello\" to C:\\dir\nthen crème 😀 a<b&c", 4, 9)
	f.Add("kafka deadline exceeded", 0, 5)
	f.Add("Kelvin \u212a and ſ long s", 7, 3)
	f.Fuzz(func(t *testing.T, text string, at, n int) {
		if !utf8.ValidString(text) || len(text) == 0 || strings.ContainsRune(text, utf8.RuneError) {
			return
		}
		at, n = abs(at)%len(text), abs(n)%16+1
		for at > 0 && !utf8.RuneStart(text[at]) {
			at--
		}
		end := min(len(text), at+n)
		for end < len(text) && !utf8.RuneStart(text[end]) {
			end++
		}
		needle := text[at:end]
		if strings.TrimSpace(needle) == "" || needle[0] == '-' {
			return
		}
		b, _ := json.Marshal(map[string]any{"type": "assistant", "uuid": "u1", "sessionId": "s",
			"message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": text}}}})
		for _, line := range []string{string(b), asciiOnly(string(b))} {
			for _, c := range []Case{Sensitive, Insensitive} {
				q, err := Parse([]string{needle}, nil, c)
				if err != nil {
					t.Fatal(err)
				}
				if !found(q, []byte(line)) {
					t.Fatalf("%q (case %d) not found in %s", needle, c, line)
				}
			}
		}
	})
}

func abs(i int) int {
	if i < 0 {
		return -i
	}
	return i
}

// found runs a line through the prefilter and the matcher as a worker does.
func found(q *Query, line []byte) bool {
	if p := q.pre; p != nil {
		if p.byRun() {
			var fd finder
			fd.reset(p, line)
			if fd.next(0) < 0 {
				return false
			}
		}
		if !p.candidate(line) {
			return false
		}
	}
	var e Entry
	Extract(agents.Claude, line, &e)
	var texts []string
	for _, p := range e.Pieces {
		texts = append(texts, p.Text)
	}
	ok, _ := q.Match(texts)
	st := newStream(q)
	st.feed(line)
	if st.done() != ok {
		panic("the stream and the line disagree on " + string(bytes.Clone(line)))
	}
	return ok
}
