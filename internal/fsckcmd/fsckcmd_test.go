package fsckcmd

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/internal/fsck"
)

// TestCheckAllOrder: the reports come out in the order of the files however
// the work interleaves, and emit returning false stops the work.
func TestCheckAllOrder(t *testing.T) {
	const n = 300
	var files []input
	for i := range n {
		files = append(files, input{fmt.Sprint(i), errors.New("x")}) // an error report needs no file
	}
	for _, stopAt := range []int{n, 0, 1, 117} {
		var got []int
		var calls atomic.Int32
		checkAll(files, func(p string) *fsck.Report { return fsck.Run(p, fsck.Options{}) }, nil, func(i int, r *fsck.Report) bool {
			calls.Add(1)
			got = append(got, i)
			if r == nil || r.Path != fmt.Sprint(i) {
				t.Errorf("report %d is %+v", i, r) // not Fatal: emit may run on another goroutine
			}
			return i != stopAt
		})
		want := min(stopAt+1, n)
		if len(got) != want || int(calls.Load()) != want {
			t.Fatalf("stop at %d: emitted %d files, want %d", stopAt, len(got), want)
		}
		for i, g := range got {
			if g != i {
				t.Fatalf("stop at %d: file %d emitted as number %d", stopAt, g, i)
			}
		}
	}
}

// TestCancelled: after a signal no file is started, and the exit code says
// the run was cancelled.
func TestCancelled(t *testing.T) {
	dir := t.TempDir()
	for i := range 20 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprint(i, ".jsonl")), []byte("torn"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cancelled.Store(true)
	defer cancelled.Store(false)
	var stdout, stderr bytes.Buffer
	code := Run([]string{"--json", "--repair", dir}, cli.IO{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }, Cwd: dir})
	if code != fsck.BitCancelled || stdout.Len() != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q; want %d and nothing", code, stdout.String(), stderr.String(), fsck.BitCancelled)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "0.jsonl")); err != nil || string(b) != "torn" {
		t.Fatalf("a file changed after the signal: %q, %v", b, err)
	}
}

// TestCheckAllFiles: checked on every core at once (the pools of memory
// shared), files get the reports they get one at a time.
func TestCheckAllFiles(t *testing.T) {
	dir := t.TempDir()
	header := `{"type":"session","version":1,"id":"s","timestamp":"t","cwd":"/"}` + "\n"
	entry := func(id, parent string) string {
		return fmt.Sprintf(`{"type":"message","id":%q,"parentId":%s,"timestamp":"t","provider":"p","model":"m","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}`+"\n", id, parent)
	}
	var files []input
	for i := range 200 {
		body := header + entry("a", "null") + entry("b", `"a"`)
		switch i % 4 {
		case 1:
			body += `{"type":"mes` // torn
		case 2:
			body += entry("a", "null") // a repeated id
		case 3:
			body = "\xef\xbb\xbf" + body + "\x00\x00"
		}
		path := filepath.Join(dir, fmt.Sprintf("%03d.jsonl", i))
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, input{path, nil})
	}
	var got []string
	checkAll(files, func(p string) *fsck.Report { return fsck.Run(p, fsck.Options{}) }, nil, func(i int, r *fsck.Report) bool {
		got = append(got, fmt.Sprintf("%s %s %+v", r.Path, r.Status, r.Findings))
		return true
	})
	if len(got) != len(files) {
		t.Fatalf("%d reports for %d files", len(got), len(files))
	}
	for i, f := range files {
		r := fsck.Run(f.path, fsck.Options{})
		if want := fmt.Sprintf("%s %s %+v", r.Path, r.Status, r.Findings); got[i] != want {
			t.Fatalf("file %d: on every core\n%s\nalone\n%s", i, got[i], want)
		}
	}
}
