//go:build poison

package scan

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/panto-dev/panto/pkg/session"
)

// TestPoisoned: in the poison build a line handed out is overwritten once
// the next is read (Reader.Next, Reset, Scan's OnLine, small and large
// inputs), and is left alone with the poisoning off.
func TestPoisoned(t *testing.T) {
	small := `{"type":"session","version":1,"id":"019c0000-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}` + "\n" +
		`{"type":"message","id":"00000001","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"hi"}}` + "\n"
	large := small + strings.Repeat(`{"type":"message","id":"00000002","parentId":"00000001","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"again"}}`+"\n", 8000)
	for _, on := range []bool{true, false} {
		SetPoison(on)
		rd := NewReader(strings.NewReader(small), 0)
		first, _, _, _ := rd.Next()
		kept := append([]byte{}, first...)
		view := first
		second, _, _, _ := rd.Next()
		if bytes.Equal(view, kept) == on {
			t.Errorf("poisoning %v: Next: the line before is %q", on, view)
		}
		kept, view = append([]byte{}, second...), second
		rd.Reset(strings.NewReader(""), 0)
		if bytes.Equal(view, kept) == on {
			t.Errorf("poisoning %v: Reset: the line before is %q", on, view)
		}
		for _, in := range []string{small, large} {
			var views, copies [][]byte
			_, err := Scan(bytes.NewReader([]byte(in)), ScanOptions{OnLine: func(_ int, _ int64, raw []byte, _ bool, _ *session.Line) {
				views, copies = append(views, raw), append(copies, append([]byte{}, raw...))
			}})
			if err != nil {
				t.Fatal(err)
			}
			_, err = Scan(io.MultiReader(strings.NewReader(in)), ScanOptions{OnLine: func(_ int, _ int64, raw []byte, _ bool, _ *session.Line) {
				views, copies = append(views, raw), append(copies, append([]byte{}, raw...))
			}})
			if err != nil {
				t.Fatal(err)
			}
			for i := range views {
				// Unpoisoned, a large input's buffers are reused too (the
				// danger): only a small one's lines stay as they were.
				if same := bytes.Equal(views[i], copies[i]); on && same || !on && !same && len(in) == len(small) {
					t.Fatalf("poisoning %v, %d bytes: OnLine's line %d after the scan is %.40q", on, len(in), i, views[i])
				}
			}
		}
	}
	SetPoison(true)
}

// TestPoisonVaries: the same bytes poisoned at generations 1 to 300 apart
// are never the same garbage (a view kept into a line and read twice must
// not agree with itself).
func TestPoisonVaries(t *testing.T) {
	first := []byte("toolUse")
	Poison(first)
	for apart := 1; apart <= 300; apart++ {
		b := []byte("toolUse")
		Poison(b) // poisonGen is the package's: no test of it runs in parallel
		if bytes.Equal(b, first) {
			t.Fatalf("poisoned %d generations apart: the same garbage %q", apart, b)
		}
		for _, c := range b {
			if c < 0x80 || c > 0xbf {
				t.Fatalf("poisoned byte %#x: not a UTF-8 continuation byte", c)
			}
		}
	}
}
