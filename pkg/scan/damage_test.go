package scan

import (
	"io"
	"strings"
	"testing"

	"github.com/panto-dev/panto/pkg/session"
)

// TestDamage holds the one verdict on a log's lines (SPEC §5): a torn tail
// is everything after the last good line when no good line follows; a
// line that is not JSON before a good line, or a second header anywhere,
// is damage. Each case is also read a line at a time, as the follower and
// push --status read, and DamageAt must say the same.
func TestDamage(t *testing.T) {
	head := strings.SplitAfterN(sample, "\n", 2)[0]
	a := `{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}` + "\n"
	b := `{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"assistant","content":[]}}` + "\n"
	good := int64(len(head + a))
	for _, c := range []struct {
		name    string
		log     string
		verdict Verdict
		good    int64 // -1: the size
		line    int   // Damaged: the line named
	}{
		{"empty", "", Clean, -1, 0},
		{"header only", head, Clean, -1, 0},
		{"clean", head + a + b, Clean, -1, 0},
		{"unterminated last line", head + a + `{"type":"mess`, TornTail, good, 0},
		{"a whole object without its newline", head + a + strings.TrimSuffix(b, "\n"), TornTail, good, 0},
		{"a terminated line that is not JSON, last", head + a + "garbage\n", TornTail, good, 0},
		{"two such lines, last", head + a + "garbage\n{\"x\n", TornTail, good, 0},
		{"NUL padding", head + a + strings.Repeat("\x00", 40), TornTail, good, 0},
		{"NUL padding with newlines", head + a + "\x00\x00\n\x00\n\x00", TornTail, good, 0},
		{"not JSON, then a good line", head + a + "garbage\n" + b, Damaged, int64(len(head + a + "garbage\n" + b)), 3},
		{"not JSON twice, then a good line", head + a + "garbage\nmore\n" + b + "tail", Damaged, int64(len(head + a + "garbage\nmore\n" + b)), 3},
		{"a second header, last", head + a + head, Damaged, -1, 3},
		{"a second header in a torn tail", head + a + "garbage\n" + head, Damaged, -1, 4},
		{"a second header after damage: the header is named", head + a + "garbage\n" + b + head, Damaged, -1, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, err := Scan(strings.NewReader(c.log), ScanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := c.good
			if want < 0 {
				want = int64(len(c.log))
			}
			d := l.Damage()
			if d.Verdict != c.verdict || d.Good != want || c.verdict == Damaged && d.At.Line != c.line {
				t.Fatalf("Damage() = %+v (%v), want %v, good %d, line %d", d, d.Verdict, c.verdict, want, c.line)
			}
			// Read a line at a time to the first line that is not good.
			r := strings.NewReader(c.log)
			rd := NewReader(r, 0)
			stream := Damage{Verdict: Clean, Good: int64(len(c.log))}
			for n := 1; ; n++ {
				line, off, term, err := rd.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				k := session.Classify(line).Kind
				if !term {
					k = session.KindCorrupt // as the scan takes an unterminated line
				}
				if n == 1 || k != session.KindCorrupt && k != session.KindHeader {
					continue
				}
				if stream, err = DamageAt(r, int64(len(c.log)), n, off, line, k); err != nil {
					t.Fatal(err)
				}
				break
			}
			// The streaming reader stops at the first bad line: a header
			// after a torn tail's first line is found by the scan alone.
			if c.name == "a second header in a torn tail" || c.name == "a second header after damage: the header is named" {
				if stream.Verdict != Damaged {
					t.Fatalf("DamageAt: %v, want damaged", stream.Verdict)
				}
				return
			}
			if stream.Verdict != c.verdict || c.verdict == Damaged && stream.At.Line != c.line {
				t.Fatalf("DamageAt = %+v (%v), want %v at line %d", stream, stream.Verdict, c.verdict, c.line)
			}
			if c.verdict == TornTail && stream.Good != want {
				t.Fatalf("DamageAt: torn tail at %d, want %d", stream.Good, want)
			}
		})
	}
}
