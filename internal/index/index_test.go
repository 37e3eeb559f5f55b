package index

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/panto-dev/panto/pkg/scan"
)

const head = `{"type":"session","version":1,"id":"019dc5ba-53f6-71a5-ab8f-b1f8709c2572","timestamp":"2026-04-25T17:40:15.990Z","cwd":"/p"}
{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"t1","provider":"p1","model":"m1","message":{"role":"user","content":[]}}
{"type":"message","id":"b2","parentId":"a1b2c3d4","timestamp":"t2","message":{"role":"assistant","content":[],"provider":"p1","model":"m1"}}
`

// open opens path with its file info; the caller closes it.
func open(t *testing.T, path string) (*os.File, os.FileInfo) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return f, fi
}

// checkpoint scans path fully and saves its checkpoint in dir.
func checkpoint(t *testing.T, dir, path string) *State {
	t.Helper()
	f, fi := open(t, path)
	defer f.Close()
	l, err := scan.Scan(f, scan.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := FromLog(l, f, fi)
	if err := s.Save(dir, path); err != nil {
		t.Fatal(err)
	}
	return s
}

func load(t *testing.T, dir, path string) *State {
	t.Helper()
	f, fi := open(t, path)
	defer f.Close()
	s := Load(dir, path, f, fi)
	if s != nil && !s.Catch(f, fi.Size()) {
		return nil
	}
	return s
}

func TestCheckpoint(t *testing.T) {
	tests := []struct {
		name     string
		change   func(dir, path string) // what happens to the file after the checkpoint
		valid    bool
		leaf     string
		stamp    string
		messages int
	}{
		{"unchanged", func(string, string) {}, true, "b2", "p1", 2},
		{"appended by panto", func(d, p string) {
			writerAppend(t, d, p, `{"type":"message","id":"c3","parentId":"b2","timestamp":"t3","provider":"p2","model":"m2","message":{"role":"user","content":[]}}`+"\n")
		}, true, "c3", "p2", 3},
		{"appended branch by panto", func(d, p string) {
			writerAppend(t, d, p, `{"type":"message","id":"c3","parentId":"a1b2c3d4","timestamp":"t3","message":{"role":"assistant","content":[],"provider":"p","model":"m"}}`+"\n")
		}, true, "c3", "", 3},
		// Whatever else changed the file since, the checkpoint is not trusted.
		{"appended by another program", func(_, p string) {
			appendTo(p, `{"type":"message","id":"c3","parentId":"b2","timestamp":"t3","provider":"p2","model":"m2","message":{"role":"user","content":[]}}`+"\n")
		}, false, "", "", 0},
		{"changed in place", func(_, p string) {
			f, _ := os.OpenFile(p, os.O_WRONLY, 0)
			f.WriteAt([]byte("X"), int64(strings.Index(head, "\n")+3)) // line 2, far from the tail
			f.Close()
		}, false, "", "", 0},
		{"torn tail", func(_, p string) { appendTo(p, `{"type":"mess`) }, false, "", "", 0},
		{"corrupt line added", func(_, p string) { appendTo(p, "{oops\n{}\n") }, false, "", "", 0},
		{"cut and rewritten", func(_, p string) {
			os.Truncate(p, int64(len(head)-10))
			appendTo(p, "xxxxxxxxx\n")
		}, false, "", "", 0},
		{"replaced", func(_, p string) {
			os.WriteFile(p+".new", []byte(head), 0o600)
			os.Rename(p+".new", p)
		}, false, "", "", 0},
		{"shrunk", func(_, p string) { os.Truncate(p, 10) }, false, "", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "s.jsonl")
			os.WriteFile(path, []byte(head), 0o600)
			checkpoint(t, dir, path)
			tt.change(dir, path)
			s := load(t, dir, path)
			if (s != nil) != tt.valid {
				t.Fatalf("valid = %v, want %v", s != nil, tt.valid)
			}
			if s == nil {
				return
			}
			if s.Leaf != tt.leaf || s.Messages != tt.messages || (s.StampKnown && s.Stamp.Provider != tt.stamp) || (!s.StampKnown && tt.stamp != "") {
				t.Fatalf("leaf %s messages %d stamp %+v known %v", s.Leaf, s.Messages, s.Stamp, s.StampKnown)
			}
			if !s.Taken("a1b2c3d4") || !s.Taken("b2") || s.Taken("ffffffff") {
				t.Fatal("ids lost")
			}
		})
	}
}

// writerAppend appends text as panto-log append does: from the checkpoint,
// which it then moves past what it wrote.
func writerAppend(t *testing.T, dir, path, text string) {
	f, fi := open(t, path)
	defer f.Close()
	s := Load(dir, path, f, fi)
	if s == nil {
		t.Fatal("no checkpoint before the append")
	}
	appendTo(path, text)
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Catch(f, after.Size()) {
		t.Fatal("the append was not caught up")
	}
	s.Seen(after)
	if err := s.Save(dir, path); err != nil {
		t.Fatal(err)
	}
}

func appendTo(path, text string) {
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(text)
	f.Close()
}

func TestDecodeGarbage(t *testing.T) {
	s := &State{Leaf: "x", Cwd: "/p"}
	s.addID("a1b2c3d4")
	s.addID("other")
	b := s.encode()
	if got, ok := decode(b); !ok || got.Leaf != "x" || !got.Taken("a1b2c3d4") || !got.Taken("other") {
		t.Fatalf("round trip: %+v %v", got, ok)
	}
	for i := range b {
		if _, ok := decode(b[:i]); ok {
			t.Fatalf("a checkpoint cut at %d decoded", i)
		}
	}
	// Ids out of order would break the binary search: refused.
	u := &State{}
	u.addID("00000002")
	u.addID("00000001")
	enc := u.encode()
	i := strings.Index(string(enc), "\x00\x00\x00\x01\x00\x00\x00\x02")
	if i < 0 {
		t.Fatal("ids not sorted in the encoding")
	}
	copy(enc[i:], "\x00\x00\x00\x02\x00\x00\x00\x01")
	if _, ok := decode(enc); ok {
		t.Fatal("a checkpoint with unsorted ids decoded")
	}
	if _, ok := decode([]byte(strings.Repeat("\xff", 100))); ok {
		t.Fatal("garbage decoded")
	}
}
