package search

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/panto-dev/panto/internal/memtest"
)

// TestHugeGeminiChat: a Gemini CLI chat of 200 MB, one JSON document, is
// searched in flat memory whether written over lines (as Gemini CLI
// writes it) or on one line (jq -c, json.dump): its needle, in the last
// message and written with escapes, is found as the reply's text in the
// chat's session. On one line it was "not a session log" (its first line
// longer than the start read, told by no line format), and its reader
// held the line whole (1.4 GB for panto-cost). Under the race detector
// the chat is 16 MB and the heap is not measured, as TestHugeLine.
func TestHugeGeminiChat(t *testing.T) {
	size := memtest.Huge(t, 200<<20)
	const id = "aaaaaaaa-1111-4222-8333-444444444444"
	for _, pretty := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), ".gemini", "tmp", "p", "chats")
		os.MkdirAll(dir, 0o700)
		p := filepath.Join(dir, "session-2026-03-01T10-00-aaaaaaaa.json")
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(f)
		nl, in := "", ""
		if pretty {
			nl, in = "\n", "  "
		}
		fmt.Fprintf(w, `{%s%s"sessionId": %q,%s%s"projectHash": "p",%s%s"startTime": "2026-03-01T10:00:00.000Z",%s%s"messages": [%s`, nl, in, id, nl, in, nl, in, nl, in, nl)
		text := strings.Repeat(`a line of the chat \"quoted\" \u00e9\n`, 50)
		for i, written := 0, 0; written < size; i++ {
			typ := "user"
			if i%2 == 1 {
				typ = "gemini"
			}
			n, _ := fmt.Fprintf(w, `%s%s{"id": "m%d", "timestamp": "2026-03-01T10:00:01.000Z", "type": %q, "content": "%s"},%s`, in, in, i, typ, text, nl)
			written += n
		}
		fmt.Fprintf(w, `%s%s{"id": "last", "timestamp": "2026-03-01T11:00:00.000Z", "type": "gemini", "content": "the end: zqhug\u00e9 \"found\"", "model": "gemini-2.5-pro"}%s%s]%s}`+"\n", in, in, nl, in, nl)
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		f.Close()

		var hits []*Hit
		var sum Summary
		peak := memtest.PeakHeap(func() { hits, sum = search(t, []File{{Path: p}}, []string{`zqhugé "found"`}, nil, Smart, Options{}) })
		t.Logf("pretty %v: read %d MB, heap in use at most %d MB", pretty, sum.Bytes>>20, peak>>20)
		if len(hits) != 1 || hits[0].Agent != "gemini" || hits[0].Session != id || hits[0].Role != "assistant" || hits[0].Kind != KindText || !strings.Contains(hits[0].Snippet, `zqhugé "found"`) {
			t.Fatalf("pretty %v: hits %+v (skipped %v): want the last reply", pretty, hits, sum.Skipped)
		}
		if !raceBuild && peak > 64<<20 {
			t.Errorf("pretty %v: heap in use reached %d MB searching a 200 MB chat", pretty, peak>>20)
		}
		os.Remove(p)
	}
}
