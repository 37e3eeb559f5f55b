package fsckcmd

import (
	"bytes"
	"context"
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
// the work interleaves, and emit returning an error stops the work (checked
// and repaired alike).
func TestCheckAllOrder(t *testing.T) {
	const n = 300
	var files []input
	for i := range n {
		files = append(files, input{fmt.Sprint(i), errors.New("x")}) // an error report needs no file
	}
	stop := errors.New("stdout closed")
	for _, c := range []struct {
		stopAt  int
		abandon bool
	}{{n, false}, {0, false}, {1, true}, {117, false}, {117, true}} {
		stopAt := c.stopAt
		var got []int
		var calls atomic.Int32
		emitted, err := checkAll(context.Background(), files, func(p string) *fsck.Report { return fsck.Run(p, fsck.Options{}) }, c.abandon, func(i int, r *fsck.Report) error {
			calls.Add(1)
			got = append(got, i)
			if r == nil || r.Path != fmt.Sprint(i) {
				t.Errorf("report %d is %+v", i, r)
			}
			if i == stopAt {
				return stop
			}
			return nil
		})
		want := min(stopAt+1, n)
		if len(got) != want || int(calls.Load()) != want {
			t.Fatalf("stop at %d: emitted %d files, want %d", stopAt, len(got), want)
		}
		var wantErr error
		if stopAt < n {
			wantErr = stop
		}
		if err != wantErr || emitted != min(stopAt, n) {
			t.Fatalf("stop at %d: checkAll = %d, %v", stopAt, emitted, err)
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
	was := interrupted
	defer func() { interrupted = was }()
	var cancel context.CancelFunc
	interrupted, cancel = context.WithCancel(context.Background())
	cancel()
	for _, args := range [][]string{{"--json", "--repair", dir}, {"--json", dir}} {
		var stdout, stderr bytes.Buffer
		code := Run(args, cli.IO{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }, Cwd: dir})
		if code != fsck.BitCancelled || stdout.Len() != 0 {
			t.Fatalf("%q: exit %d, stdout %q, stderr %q; want %d and nothing", args, code, stdout.String(), stderr.String(), fsck.BitCancelled)
		}
		if len(args) == 2 && !strings.Contains(stderr.String(), "cancelled: the files not reported above were not checked") {
			t.Errorf("%q: stderr %q does not say the check was cancelled", args, stderr.String())
		}
		if b, err := os.ReadFile(filepath.Join(dir, "0.jsonl")); err != nil || string(b) != "torn" {
			t.Fatalf("a file changed after the signal: %q, %v", b, err)
		}
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
	checkAll(context.Background(), files, func(p string) *fsck.Report { return fsck.Run(p, fsck.Options{}) }, false, func(i int, r *fsck.Report) error {
		got = append(got, fmt.Sprintf("%s %s %+v", r.Path, r.Status, r.Findings))
		return nil
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
