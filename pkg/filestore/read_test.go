package filestore

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

func TestReader(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(path, []byte("0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := OpenRead(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.Regular() || r.Size() != 10 {
		t.Fatalf("regular %v, size %d; want true, 10", r.Regular(), r.Size())
	}
	reads := []struct {
		off  int64
		n    int
		want string
		err  error
	}{
		{0, 10, "0123456789", nil},
		{3, 4, "3456", nil},
		{8, 4, "89", io.EOF},
		{10, 1, "", io.EOF},
	}
	for _, rd := range reads {
		b := make([]byte, rd.n)
		n, err := r.ReadAt(b, rd.off)
		if string(b[:n]) != rd.want || err != rd.err {
			t.Errorf("ReadAt(%d bytes at %d) = %q, %v; want %q, %v", rd.n, rd.off, b[:n], err, rd.want, rd.err)
		}
	}

	// Read goes on from where it stopped.
	var got []byte
	for {
		b := make([]byte, 4)
		n, err := r.Read(b)
		got = append(got, b[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if string(got) != "0123456789" {
		t.Fatalf("Read in fours: %q", got)
	}

	// The size now, and a lock another open file holds.
	w, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if locked, err := r.Locked(); locked || err != nil {
		t.Fatalf("Locked before the writer's lock: %v, %v", locked, err)
	}
	if err := Lock(w, 0); err != nil {
		t.Fatal(err)
	}
	w.WriteString("ab")
	if locked, err := r.Locked(); !locked || err != nil {
		t.Fatalf("Locked under the writer's lock: %v, %v", locked, err)
	}
	if now, err := r.SizeNow(); now != 12 || err != nil || r.Size() != 10 {
		t.Fatalf("SizeNow %d, %v, Size %d; want 12, nil, 10", now, err, r.Size())
	}

	// What is not a regular file opens without waiting, and says so.
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, fifo} {
		r, err := OpenRead(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if r.Regular() {
			t.Errorf("%s: Regular", p)
		}
		r.Close()
	}
	if _, err := OpenRead(filepath.Join(dir, "none")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a missing file: %v", err)
	}
}

// TestCuts: the cuts beside a file are found whatever bytes its name holds
// (glob's own characters, bytes that are not UTF-8), and only its own.
func TestCuts(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a[1]*?\xff.jsonl", "plain.jsonl"} {
		path := filepath.Join(dir, name)
		want := []string{path + ".cut-20261201T000000Z", path + ".cut-20261201T000001Z"}
		for _, n := range append([]string{path, path + "x.cut-other", path + ".cutnot"}, want...) {
			if err := os.WriteFile(n, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if got := Cuts(path); !slices.Equal(got, want) {
			t.Errorf("Cuts(%q) = %q, want %q", path, got, want)
		}
	}
	if got := Cuts(filepath.Join(dir, "none", "x.jsonl")); got != nil {
		t.Errorf("Cuts of a missing directory = %q", got)
	}
}
