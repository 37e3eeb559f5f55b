package fsckcmd

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/internal/memtest"
)

// TestForeignLongLine: panto-fsck of a Gemini CLI chat of 200 MB written
// on one line (jq -c) says it is a Gemini chat, checked and repaired, in
// flat memory, and leaves it as it is: the file was read as a session
// first, its line held whole (667 MB of RSS for a chat of 221 MB), before
// it was told another agent's log. Under the race detector the chat is
// 16 MB and the heap is not measured, as logcmd's TestSearchLongFirstLine.
func TestForeignLongLine(t *testing.T) {
	size := memtest.Huge(t, 200<<20)
	dir := t.TempDir()
	p := filepath.Join(dir, "session-2026-03-01T10-00-aaaaaaaa.json")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, `{"sessionId":"aaaaaaaa-1111-4222-8333-444444444444","projectHash":"p","messages":[`)
	msg := `{"id":"m","timestamp":"2026-03-01T10:00:01.000Z","type":"user","content":"` + strings.Repeat(`a line \"quoted\"\n`, 200) + `"},`
	for written := 0; written < size; written += len(msg) {
		w.WriteString(msg)
	}
	w.WriteString(`{"id":"z","timestamp":"2026-03-01T10:00:01.000Z","type":"user","content":"end"}]}` + "\n")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	fi, _ := os.Stat(p)
	for _, args := range [][]string{{"--json", p}, {"--json", "--repair", p}} {
		var stdout, stderr bytes.Buffer
		var code int
		peak := memtest.PeakHeap(func() {
			code = Run(args, cli.IO{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }, Cwd: dir})
		})
		t.Logf("%q: heap in use at most %d MB; %s", args, peak>>20, stdout.String())
		if code != 0 || !strings.Contains(stdout.String(), `"status":"foreign"`) || !strings.Contains(stdout.String(), `"format":"gemini"`) {
			t.Fatalf("%q: exit %d, stdout %s, stderr %s: want a Gemini chat", args, code, stdout.String(), stderr.String())
		}
		if now, err := os.Stat(p); err != nil || now.Size() != fi.Size() || !now.ModTime().Equal(fi.ModTime()) {
			t.Fatalf("%q: the chat was changed", args)
		}
		if !raceBuild && peak > 64<<20 {
			t.Errorf("%q: heap in use reached %d MB checking a chat of %d MB on one line", args, peak>>20, size>>20)
		}
	}
}
