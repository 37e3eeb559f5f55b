package filestore

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/panto-dev/panto/pkg/scan"
	"github.com/panto-dev/panto/pkg/store"
)

// scanFile indexes the file at path, failing the test on a read error.
func scanFile(t *testing.T, path string) *scan.Log {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l, err := scan.Scan(f, scan.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// checkClean fails unless the file at path is a clean session: a header,
// no damage, every parent an earlier entry.
func checkClean(t *testing.T, path string) *scan.Log {
	t.Helper()
	l := scanFile(t, path)
	if !l.HeaderOK || l.Torn() || len(l.Corrupt)+len(l.Invalid)+len(l.Headers)+len(l.DupIDs)+len(l.Dangling) > 0 {
		t.Fatalf("%s is not clean: header %v torn %v corrupt %v invalid %v headers %v dup %v dangling %v",
			path, l.HeaderOK, l.Torn(), l.Corrupt, l.Invalid, l.Headers, l.DupIDs, l.Dangling)
	}
	return l
}

func mustAppend(t *testing.T, path string, msgs []store.Msg) *store.Result {
	t.Helper()
	res, err := (&Files{}).Append(context.Background(), path, msgs, store.AppendOptions{Cwd: "/t"})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestTornTailEveryOffset cuts a valid log at every byte offset of its last
// entry; append must repair it, keep every complete entry, and save the cut.
func TestTornTailEveryOffset(t *testing.T) {
	dir := t.TempDir()
	orig := filepath.Join(dir, "orig.jsonl")
	mustAppend(t, orig, pair("a", 20))
	mustAppend(t, orig, pair("b", 20)[:1])
	data, err := os.ReadFile(orig)
	if err != nil {
		t.Fatal(err)
	}
	lastStart := int64(bytes.LastIndexByte(data[:len(data)-1], '\n') + 1)
	for k := lastStart; k <= int64(len(data)); k++ {
		path := filepath.Join(dir, fmt.Sprintf("cut-%d.jsonl", k))
		if err := os.WriteFile(path, data[:k], 0o600); err != nil {
			t.Fatal(err)
		}
		complete := 2 // entries whose line is whole
		if k == int64(len(data)) {
			complete = 3
		}
		res := mustAppend(t, path, pair("c", 5)[:1])
		if k > lastStart && k < int64(len(data)) {
			if res.Cut == nil || res.Cut.From != lastStart {
				t.Fatalf("offset %d: cut %+v, want a cut at %d", k, res.Cut, lastStart)
			}
			saved, err := os.ReadFile(res.Cut.SavedAs)
			if err != nil || !bytes.Equal(saved, data[lastStart:k]) {
				t.Fatalf("offset %d: saved cut %q, want %q (%v)", k, saved, data[lastStart:k], err)
			}
		} else if res.Cut != nil {
			t.Fatalf("offset %d: unexpected cut %+v", k, res.Cut)
		}
		l := checkClean(t, path)
		if len(l.Nodes) != complete+1 {
			t.Fatalf("offset %d: %d entries, want %d", k, len(l.Nodes), complete+1)
		}
		got, _ := os.ReadFile(path)
		if !bytes.HasPrefix(got, data[:lastStart]) {
			t.Fatalf("offset %d: the complete entries changed", k)
		}
	}
}

// TestKillDuringAppend kills writers with SIGKILL at random moments: no
// acknowledged entry may be lost, and the file must be clean after the next
// append's tail repair.
func TestKillDuringAppend(t *testing.T) {
	iterations := 20
	if testing.Short() {
		iterations = 5
	}
	dir := t.TempDir()
	for it := range iterations {
		path := filepath.Join(dir, fmt.Sprintf("k%d.jsonl", it))
		cmd := helperCmd(t, "append", path, "1000000", "200000")
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(20+rand.IntN(80)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		if _, err := os.Stat(path); os.IsNotExist(err) {
			if out.Len() > 0 {
				t.Fatalf("iteration %d: entries acknowledged but no file", it)
			}
			continue
		}
		mustAppend(t, path, pair("after", 1))
		l := checkClean(t, path)
		for _, id := range strings.Fields(out.String()) {
			if l.Lookup(id) < 0 {
				t.Fatalf("iteration %d: acknowledged entry %s lost", it, id)
			}
		}
	}
}

// TestConcurrentAppenders runs 8 writer processes on one session: every
// line intact, one chain of parents, no entry lost.
func TestConcurrentAppenders(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	mustAppend(t, path, pair("seed", 1))
	const writers, batches = 8, 25
	outs := make([]bytes.Buffer, writers)
	var wg sync.WaitGroup
	for w := range writers {
		cmd := helperCmd(t, "append", path, fmt.Sprint(batches), fmt.Sprint(rand.IntN(5000)))
		cmd.Stdout = &outs[w]
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := cmd.Run(); err != nil {
				t.Errorf("writer: %v: %s", err, stderr.String())
			}
		}()
	}
	wg.Wait()
	l := checkClean(t, path)
	if want := 2 + writers*batches*2; len(l.Nodes) != want {
		t.Fatalf("%d entries, want %d", len(l.Nodes), want)
	}
	for i, n := range l.Nodes[1:] {
		if n.Parent != int32(i) {
			t.Fatalf("entry %s: parent %d, want the entry before it (%d): not one chain", l.ID(int32(i+1)), n.Parent, i)
		}
	}
	for _, o := range outs {
		for _, id := range strings.Fields(o.String()) {
			if l.Lookup(id) < 0 {
				t.Fatalf("acknowledged entry %s lost", id)
			}
		}
	}
}

// TestRacingCreators starts two creators of the same new session: one wins,
// the other fails visibly, and the file has one header.
func TestRacingCreators(t *testing.T) {
	dir := t.TempDir()
	for it := range 20 {
		path := filepath.Join(dir, fmt.Sprintf("r%d.jsonl", it))
		var outs [2]bytes.Buffer
		var wg sync.WaitGroup
		for i := range outs {
			cmd := helperCmd(t, "create", path)
			cmd.Stdout = &outs[i]
			wg.Add(1)
			go func() { defer wg.Done(); cmd.Run() }()
		}
		wg.Wait()
		got := strings.TrimSpace(outs[0].String()) + "," + strings.TrimSpace(outs[1].String())
		if got != "won,lost" && got != "lost,won" {
			t.Fatalf("iteration %d: creators said %q, want one won and one lost", it, got)
		}
		if l := checkClean(t, path); len(l.Nodes) != 2 {
			t.Fatalf("iteration %d: %d entries, want 2", it, len(l.Nodes))
		}
	}
}

// TestFileSizeLimit appends a batch that RLIMIT_FSIZE (ulimit -f) stops
// halfway: the append fails and the file is as it was before the batch.
func TestFileSizeLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	mustAppend(t, path, pair("seed", 100))
	before, _ := os.ReadFile(path)
	cmd := helperCmd(t, "fsize", path, fmt.Sprint(len(before)+4096))
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "file too large") {
		t.Fatalf("helper said %q, want a file-too-large error", out)
	}
	if n := strings.Count(string(out), path); n != 1 {
		t.Errorf("helper said %q: the path %d times, want once", out, n) // "write P: write P: …" before
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Fatalf("file changed: %d bytes before, %d after", len(before), len(after))
	}
}
