package agents

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/panto-dev/panto/internal/memtest"
)

// TestSniffLongDocument: a Gemini CLI chat of 200 MB written on one line
// (jq -c, json.dump) is told a Gemini chat by Sniff, Identify and Read in
// bounded memory, from the first MiB of its line: each read the line
// whole first (panto-cost 791 MB, panto-log list --all 1.17 GB), though
// the chat's reader streams it. Under the race detector the chat is 16 MB,
// through the same code: the line alone is still twice the bound that
// Sniff and Identify keep to.
func TestSniffLongDocument(t *testing.T) {
	size := memtest.Huge(t, 200<<20)
	p := filepath.Join(t.TempDir(), "session-2026-03-01T10-00-aaaaaaaa.json")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, `{"sessionId":"aaaaaaaa-1111-4222-8333-444444444444","projectHash":"p","startTime":"2026-03-01T10:00:00.000Z","messages":[`)
	text := strings.Repeat(`a line of the chat \"quoted\" \u00e9\n`, 50)
	msgs := 0
	for written := 0; written < size; msgs++ {
		typ := "user"
		if msgs%2 == 1 {
			typ = "gemini"
		}
		n, _ := fmt.Fprintf(w, `{"id":"m%d","timestamp":"2026-03-01T10:00:01.000Z","type":%q,"content":"%s"},`, msgs, typ, text)
		written += n
	}
	fmt.Fprintf(w, `{"id":"last","timestamp":"2026-03-01T11:00:00.000Z","type":"gemini","content":"the end","model":"gemini-2.5-pro"}]}`+"\n")
	msgs++
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	f, err = os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	n := fi.Size()
	allocated := func(fn func()) uint64 {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		fn()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	const bound = 8 << 20
	for name, tell := range map[string]func() (Format, error){
		"Sniff":    func() (Format, error) { return Sniff(f, n) },
		"Identify": func() (Format, error) { return Identify(f, n) },
	} {
		var got Format
		var err error
		alloc := allocated(func() { got, err = tell() })
		if got != Gemini || err != nil {
			t.Fatalf("%s: %v (%v), want gemini", name, got, err)
		}
		t.Logf("%s of a %d MB chat on one line: %d KB allocated", name, n>>20, alloc>>10)
		if alloc > bound {
			t.Errorf("%s of a %d MB chat on one line allocated %d MB, want under %d MB", name, n>>20, alloc>>20, bound>>20)
		}
	}
	entries := 0
	var got Format
	alloc := allocated(func() {
		got, _, err = Read(Source{Path: p, R: f, Size: n}, Unknown, Options{}, func(*Header) error { return nil },
			func(e *Entry) error { entries++; return nil })
	})
	if got != Gemini || err != nil || entries < msgs/2 { // the user messages at least
		t.Fatalf("Read: %v (%v), %d entries of %d messages", got, err, entries, msgs)
	}
	t.Logf("Read of a %d MB chat on one line: %d MB allocated", n>>20, alloc>>20)
	if !raceBuild && alloc > uint64(n)/3 {
		t.Errorf("Read of a %d MB chat on one line allocated %d MB, want under %d MB", n>>20, alloc>>20, n/3>>20)
	}
}

// TestSniffLook: a log is told the same with any look at its first line
// (Sniff, Identify, Read's detection), for every log of testdata and
// ../shared/real and for first lines longer than the look that are no
// agent's document (a line of a JSON Lines log with a long prompt, a
// torn line, several objects): only a line that starts an agent's
// document is told from its start.
func TestSniffLook(t *testing.T) {
	logs := map[string][]byte{
		"empty":       {},
		"blank lines": []byte("\n \r\n\t\n"),
		"a document":  []byte("{\n  \"sessionId\": \"s\",\n  \"messages\": []\n}\n"),
		"not json":    []byte("hello\nworld\n"),
	}
	for _, root := range []string{"testdata", "../../../shared/real"} {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				if b, err := os.ReadFile(p); err == nil {
					logs[p] = b
				}
			}
			return nil
		})
	}
	if len(logs) < 20 {
		t.Fatalf("%d logs: the testdata is missing", len(logs))
	}
	long := strings.Repeat("y", 5000)
	for name, b := range map[string]string{
		"a long prompt first":   `{"type":"user","uuid":"u","sessionId":"s","cwd":"/p","message":{"role":"user","content":"` + long + `"}}` + "\n",
		"a long pi header":      `{"type":"session","version":3,"id":"x","timestamp":"2026-01-01T00:00:00Z","cwd":"/p","x":"` + long + `"}` + "\n" + `{"type":"message","id":"a1b2c3d4"}` + "\n",
		"a long torn line":      `{"type":"user","uuid":"u","sessionId":"s","message":{"role":"user","content":"` + long + "\n" + `{"type":"user","uuid":"v","sessionId":"s","message":{"role":"user","content":"x"}}` + "\n",
		"two long objects":      `{"type":"user","uuid":"u","sessionId":"s","message":{"role":"user","content":"` + long + `"}}{"type":"user","uuid":"v","sessionId":"s","message":{"role":"user","content":"x"}}` + "\n",
		"a chat on one line":    `{"sessionId":"s","projectHash":"p","messages":[{"id":"m","timestamp":"2026-03-01T10:00:01.000Z","type":"user","content":"` + long + `"}]}` + "\n",
		"a sorted chat":         `{"messages":[{"id":"m","timestamp":"2026-03-01T10:00:01.000Z","type":"user","content":"x"},{"id":"n","timestamp":"2026-03-01T10:00:01.000Z","type":"user","content":"` + long + `"}],"projectHash":"p","sessionId":"s"}`,
		"a long line of json":   `{"a":"` + long + `"}` + "\n",
		"a long line, no json":  long + "\n",
		"blank, then long":      "\n\n  \n" + `{"sessionId":"s","projectHash":"p","messages":[{"id":"m","timestamp":"2026-03-01T10:00:01.000Z","type":"user","content":"` + long + `"}]}`,
		"a line ending at 4096": `{"type":"user","uuid":"u","sessionId":"s","message":{"role":"user","content":"` + long[:4096-80] + `"}}` + "\n",
	} {
		logs[name] = []byte(b)
	}
	type told struct {
		sniff, identify, read Format
		errs                  string
	}
	tell := func(b []byte) told {
		r, n := bytes.NewReader(b), int64(len(b))
		s, e1 := Sniff(r, n)
		i, e2 := Identify(r, n)
		f, e3 := readFormat(Source{R: r, Size: n})
		return told{s, i, f, fmt.Sprint(e1 != nil, e2 != nil, e3 != nil)}
	}
	defer func(l int64) { sniffLook = l }(sniffLook)
	want := map[string]told{}
	for name, b := range logs {
		want[name] = tell(b)
	}
	for _, look := range []int64{1, 40, 300, 4096, 4095} {
		sniffLook = look
		for name, b := range logs {
			if got := tell(b); got != want[name] {
				t.Errorf("%s, a look of %d bytes: %+v, with a look of a MiB %+v", name, look, got, want[name])
			}
		}
	}
}
