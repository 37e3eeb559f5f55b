package logcmd

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/panto-dev/panto/internal/memtest"
)

// TestSearchLongFirstLine: panto-log search of a log whose first line is
// 100 MB (a pasted file in the first prompt), in a file whose name holds
// no session id, keeps its heap small (SPEC §15: memory flat): telling
// the log's format read that line whole, and so did finding its id to
// leave its import out (hostile1 #5: 1.7 GB of RSS for a 200 MB line).
// Under the race detector the line is 16 MB (the same way through the
// code, raced) and the heap is not measured: 100 MB took 19 s of CPU there;
// the plain build measures it (scripts/test runs this test without -race
// too).
func TestSearchLongFirstLine(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 100 MB")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "big.jsonl")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	id := "11111111-2222-4333-8444-555555555555"
	fmt.Fprintf(f, `{"parentUuid":null,"cwd":"/home/u","sessionId":%q,"type":"user","message":{"role":"user","content":"`, id)
	chunk := bytes.Repeat([]byte(`a pasted file, line after line\n`), 1<<12)
	size := 100 << 20
	if raceBuild {
		size = 16 << 20
	}
	for written := 0; written < size; written += len(chunk) {
		f.Write(chunk)
	}
	f.WriteString(`the end: zqfirst"},"uuid":"aaaa","timestamp":"2026-11-01T00:00:00.000Z"}` + "\n")
	fmt.Fprintf(f, `{"parentUuid":"aaaa","cwd":"/home/u","sessionId":%q,"type":"assistant","message":{"role":"assistant","model":"claude-opus-4-5","content":[{"type":"text","text":"zqreply"}]},"uuid":"bbbb","timestamp":"2026-11-01T00:00:01.000Z"}`+"\n", id)
	f.Close()
	env := map[string]string{"HOME": dir, "PANTO_SESSION_DIR": filepath.Join(dir, "sessions")}
	for _, word := range []string{"zqfirst", "zqreply", "zqnothing"} {
		var code int
		var stdout, stderr string
		peak := memtest.PeakHeap(func() { code, stdout, stderr = run(t, dir, env, "search", word, "--path", p) })
		t.Logf("%s: heap in use at most %d MB", word, peak>>20)
		want := 0
		if word == "zqnothing" {
			want = 1
		}
		if code != want || stderr != "" {
			t.Fatalf("%s: exit %d, want %d; stderr %q", word, code, want, stderr)
		}
		if want == 0 && !strings.Contains(stdout, `"session":"`+id+`"`) {
			t.Errorf("%s: the hit is not the session's: %s", word, stdout)
		}
		if !raceBuild && peak > 64<<20 {
			t.Errorf("%s: heap in use reached %d MB searching a log whose first line is 100 MB", word, peak>>20)
		}
	}
}
