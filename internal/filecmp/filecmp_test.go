package filecmp

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReaders(t *testing.T) {
	block := strings.Repeat("x", 64<<10)
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"", "", true},
		{"abc", "abc", true},
		{"abc", "abd", false},
		{"abc", "ab", false},
		{"ab", "abc", false},
		{"", "a", false},
		{block, block, true},                 // a whole block, then the end
		{block + "a", block + "a", true},     // a block and a part
		{block, block + "a", false},          // b goes on after a whole block of a
		{block + "a", block, false},          // a goes on
		{block + "ab", block + "ac", false},  // a change in the second block
		{block + block, block + block, true}, // two whole blocks
	} {
		same, err := Readers(strings.NewReader(c.a), strings.NewReader(c.b))
		if err != nil || same != c.same {
			t.Errorf("%d and %d bytes: Readers = %v, %v; want %v", len(c.a), len(c.b), same, err, c.same)
		}
	}
	bad := errors.New("disk")
	for _, c := range []struct{ a, b io.Reader }{
		{iotest.ErrReader(bad), strings.NewReader("")},
		{strings.NewReader(""), iotest.ErrReader(bad)},
		{io.MultiReader(strings.NewReader("ab"), iotest.ErrReader(bad)), bytes.NewReader([]byte("ab"))},
	} {
		if same, err := Readers(c.a, c.b); same || !errors.Is(err, bad) {
			t.Errorf("a failing read: Readers = %v, %v; want false, %v", same, err, bad)
		}
	}
}

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b, c, d := write("a", "same bytes\n"), write("b", "same bytes\n"), write("c", "other byte\n"), write("d", "same bytes")
	for _, x := range []struct {
		a, b string
		same bool
	}{
		{a, b, true}, {a, a, true}, {a, c, false}, {a, d, false}, {d, a, false},
		{a, filepath.Join(dir, "missing"), false}, {filepath.Join(dir, "missing"), a, false},
		{dir, dir, false}, // a directory cannot be read
	} {
		if got := Files(x.a, x.b); got != x.same {
			t.Errorf("Files(%s, %s) = %v, want %v", filepath.Base(x.a), filepath.Base(x.b), got, x.same)
		}
	}
}
