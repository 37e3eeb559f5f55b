package scan

import (
	"io"

	"github.com/panto-dev/panto/pkg/session"
)

// Verdict is what a session file's lines are to a writer, a follower and a
// store that receives them (SPEC §5). It is decided here once: the file
// store's writers, panto-fsck, the follower, push --status and Receive ask
// for it and do not derive it from a Log's fields.
type Verdict int8

const (
	// Clean: every line is terminated and good (a JSON object; a header
	// on line 1 only).
	Clean Verdict = iota
	// TornTail: good up to Damage.Good, then bytes that are not a good
	// line (an unterminated line, lines that are not JSON, NUL padding)
	// and no good line after them. A crash leaves it; a writer cuts it,
	// a reader leaves it out, a follower never sends it.
	TornTail
	// Damaged: a session header after line 1, or a line that is not JSON
	// with a good line after it. Nothing may be written after it;
	// panto-fsck repairs it.
	Damaged
)

func (v Verdict) String() string {
	switch v {
	case Clean:
		return "clean"
	case TornTail:
		return "torn tail"
	}
	return "damaged"
}

// Damage is the verdict on a log's lines and where it lies.
type Damage struct {
	Verdict Verdict
	Good    int64   // the offset after the last good line: where a torn tail starts (the size when Clean)
	At      Problem // Damaged: a header after line 1 if there is one, else the first line that is not JSON
}

// Damage is the verdict on the lines the scan read (of the header on
// line 1 it says nothing: HeaderOK does).
func (l *Log) Damage() Damage {
	d := Damage{Good: l.Good}
	switch {
	case len(l.Headers) > 0:
		d.Verdict, d.At = Damaged, l.Headers[0]
	case l.CorruptMid:
		d.Verdict, d.At = Damaged, l.Corrupt[0]
	case l.Size > l.Good:
		d.Verdict = TornTail
	}
	return d
}

// DamageAt is the verdict for a reader that reads a log a line at a time
// (Reader, not Scan) and meets, at off, a line that is not a good one:
// line n, whose kind is session.KindHeader or KindCorrupt, of the log r
// holds up to size. It is Log.Damage's rule: a header after line 1 is
// damage wherever it is; a line that is not JSON is where a torn tail
// starts unless a good line follows it, which makes it damage. Only the
// lines after off are read, up to the first good one.
func DamageAt(r io.ReaderAt, size int64, n int, off int64, line []byte, kind session.Kind) (Damage, error) {
	if kind == session.KindHeader {
		return Damage{Verdict: Damaged, Good: off, At: Problem{Line: n, Off: off, What: "header line after line 1"}}, nil
	}
	what := session.Classify(line).Problem
	from := off + int64(len(line)) + 1
	if from < size {
		rd := NewReader(io.NewSectionReader(r, from, size-from), from)
		for {
			next, _, term, err := rd.Next()
			if err == io.EOF || err == nil && !term {
				break
			}
			if err != nil {
				return Damage{}, err
			}
			if session.Classify(next).Kind != session.KindCorrupt {
				return Damage{Verdict: Damaged, Good: off, At: Problem{Line: n, Off: off, What: what}}, nil
			}
		}
	}
	return Damage{Verdict: TornTail, Good: off}, nil
}
