package logcmd

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/internal/memtest"
)

// TestLinesEnd: export's complete lines end after the last newline,
// wherever it is against the chunks it is looked for in: none, the first
// byte, at a chunk's edge, a torn tail of several chunks.
func TestLinesEnd(t *testing.T) {
	const chunk = 64 << 10
	for name, c := range map[string]struct {
		b    string
		want int64
	}{
		"empty":                     {"", 0},
		"no newline":                {"abc", 0},
		"one newline":               {"\n", 1},
		"a torn tail":               {"a\nb\nc", 4},
		"complete":                  {"a\nb\n", 4},
		"a newline ending a chunk":  {strings.Repeat("x", chunk-1) + "\n" + strings.Repeat("y", chunk), chunk},
		"a newline opening a chunk": {strings.Repeat("x", chunk) + "\n" + strings.Repeat("y", 10), chunk + 1},
		"a tail of three chunks":    {"a\n" + strings.Repeat("y", 3*chunk), 2},
		"a line of three chunks":    {strings.Repeat("y", 3*chunk) + "\n", 3*chunk + 1},
	} {
		got, err := linesEnd(strings.NewReader(c.b), int64(len(c.b)))
		if got != c.want || err != nil {
			t.Errorf("%s: %d (%v), want %d", name, got, err, c.want)
		}
	}
	// a file cut while read: an error, not a shorter export
	if _, err := linesEnd(strings.NewReader("a\nb"), 10); err == nil {
		t.Error("a file shorter than its size: no error")
	}
}

// TestExportLongLine: panto-log export of a file whose one line is 200 MB
// (a Gemini CLI chat written by jq -c) writes it whole in flat memory,
// and holds back a torn tail: each line was held until its newline came
// (982 MB of RSS for a chat of 221 MB). Under the race detector the line
// is 16 MB and the heap is not measured, as TestSearchLongFirstLine.
func TestExportLongLine(t *testing.T) {
	size := memtest.Huge(t, 200<<20)
	dir := t.TempDir()
	p := filepath.Join(dir, "session-2026-03-01T10-00-aaaaaaaa.json")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	want := sha256.New()
	w := io.MultiWriter(f, want)
	fmt.Fprintf(w, `{"sessionId":"aaaaaaaa-1111-4222-8333-444444444444","projectHash":"p","messages":[`)
	msg := []byte(`{"id":"m","timestamp":"2026-03-01T10:00:01.000Z","type":"user","content":"` + strings.Repeat(`a line \"quoted\"\n`, 200) + `"},`)
	for written := 0; written < size; written += len(msg) {
		w.Write(msg)
	}
	io.WriteString(w, `{"id":"z","timestamp":"2026-03-01T10:00:01.000Z","type":"user","content":"end"}]}`+"\n")
	f.WriteString(`{"torn`) // a tail being written: left out
	f.Close()
	env := map[string]string{"HOME": dir, "PANTO_SESSION_DIR": filepath.Join(dir, "sessions")}
	got := sha256.New()
	var errb bytes.Buffer
	var code int
	peak := memtest.PeakHeap(func() {
		code = Run([]string{"export", p}, cli.IO{Stdin: strings.NewReader(""), Stdout: got, Stderr: &errb, Getenv: func(k string) string { return env[k] }, Cwd: dir})
	})
	t.Logf("export of a %d MB line: heap in use at most %d MB", size>>20, peak>>20)
	if code != 0 || errb.Len() > 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !bytes.Equal(sum(got), sum(want)) {
		t.Error("the export is not the file's complete line")
	}
	if !raceBuild && peak > 64<<20 {
		t.Errorf("heap in use reached %d MB exporting a line of %d MB", peak>>20, size>>20)
	}
}

func sum(h hash.Hash) []byte { return h.Sum(nil) }
