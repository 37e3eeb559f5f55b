package agents

import (
	"bytes"
	"errors"
	"io"
	"strings"

	"github.com/panto-dev/panto/internal/rawjson"
)

// docStream reads a log that is one JSON object (a Gemini CLI chat of
// before v0.39, rewritten whole) member by member, and one member that is
// an array (its messages) element by element: what it holds at once is
// one element, never the file (a chat of hundreds of MB reads in the
// memory of its largest message).
type docStream struct {
	r    io.Reader
	buf  []byte
	i    int   // where reading is in buf
	base int64 // the file offset of buf[0]
	line int   // the line number of buf[i] (counted up to lineAt)
	at   int   // how far lines are counted in buf
	eof  bool
	err  error
}

// errDocCut says the document ends (or stops being JSON) before it is whole.
var errDocCut = errors.New("the document ends before it is whole")

func newDocStream(r io.Reader) *docStream {
	return &docStream{r: r, buf: make([]byte, 0, 256<<10), line: 1}
}

// fill reads more of the file into buf, keeping buf[i:]; false at the end.
func (d *docStream) fill() bool {
	if d.eof {
		return false
	}
	d.count()
	if d.i > 0 {
		n := copy(d.buf, d.buf[d.i:])
		d.base += int64(d.i)
		d.at -= d.i
		d.buf, d.i = d.buf[:n], 0
	}
	if len(d.buf) == cap(d.buf) {
		d.buf = append(d.buf, make([]byte, len(d.buf))...)[:len(d.buf)]
	}
	n, err := d.r.Read(d.buf[len(d.buf):cap(d.buf)])
	d.buf = d.buf[:len(d.buf)+n]
	if err == io.EOF {
		d.eof = true
	} else if err != nil {
		d.err, d.eof = err, true
	}
	return n > 0 || !d.eof
}

// count counts the lines up to i.
func (d *docStream) count() {
	if d.at < d.i {
		d.line += bytes.Count(d.buf[d.at:d.i], []byte{'\n'})
		d.at = d.i
	}
}

// Line returns the line number where reading is.
func (d *docStream) Line() int {
	d.count()
	return d.line
}

// peek skips white space and returns the next byte, reading more as
// needed; 0 at the end.
func (d *docStream) peek() byte {
	for {
		d.i = rawjson.SkipWS(d.buf, d.i)
		if d.i < len(d.buf) {
			return d.buf[d.i]
		}
		if !d.fill() {
			return 0
		}
	}
}

// value returns the next whole JSON value (valid until the next call).
func (d *docStream) value() ([]byte, error) {
	if d.peek() == 0 {
		return nil, d.cut()
	}
	for {
		end, ok := rawjson.Value(d.buf, d.i, 1)
		if ok && (end < len(d.buf) || d.eof) {
			v := d.buf[d.i:end]
			d.i = end
			return v, nil
		}
		if !d.fill() {
			return nil, d.cut()
		}
	}
}

// skip passes over the next value, found by its strings and nesting
// alone, not validated: for a read that only looks for what is after it
// (the members after a chat's messages), the read of the values themselves
// validating them.
func (d *docStream) skip() error {
	if d.peek() == 0 {
		return d.cut()
	}
	for {
		if end := rawjson.Skip(d.buf, d.i); end < len(d.buf) {
			d.i = end
			return nil
		}
		if !d.fill() {
			return d.cut()
		}
	}
}

// indent is how many spaces begin the line of the value at d.i, when only
// spaces are before it on its line; -1 when not, or not known (the line
// began before the buffer).
func (d *docStream) indent() int {
	n := 0
	for j := d.i - 1; j >= 0; j-- {
		switch d.buf[j] {
		case ' ':
			n++
		case '\n':
			return n
		default:
			return -1
		}
	}
	return -1
}

// jumpArray passes over the rest of an array whose '[' was just read, the
// value of a member on a line of its own indented by indent spaces, in a
// document indented as JSON.stringify(…, null, 2) and Python's json.dump
// indent it, each level by more spaces than the one around it (Gemini
// CLI's chats): its ']' is on the first line after it that is those
// spaces and ']' (a newline is never in a valid string). It is found with
// bytes.Index, not by walking every value. False, nothing passed over,
// when the array's next line is not indented deeper. For a read that looks
// for what is after the array, as skip; the read of its elements
// validates them.
func (d *docStream) jumpArray(indent int) (bool, error) {
	// the array's next line: its elements, deeper, or its end
	for len(d.buf)-d.i < indent+3 {
		if !d.fill() {
			return false, nil
		}
	}
	nl := []byte("\n" + strings.Repeat(" ", indent))
	if !bytes.HasPrefix(d.buf[d.i:], nl) || d.buf[d.i+len(nl)] != ' ' && d.buf[d.i+len(nl)] != ']' {
		return false, nil
	}
	// Each ']' is looked at (IndexByte: rarer than a newline, which
	// bytes.Index would stop at), the line before it compared.
	for {
		for {
			k := bytes.IndexByte(d.buf[d.i+len(nl):], ']')
			if k < 0 {
				break
			}
			d.i += k
			if bytes.Equal(d.buf[d.i:d.i+len(nl)], nl) {
				d.i += len(nl) + 1
				return true, nil
			}
			d.i++
		}
		d.i = max(d.i, len(d.buf)-len(nl))
		if !d.fill() {
			return true, d.cut()
		}
	}
}

func (d *docStream) cut() error {
	if d.err != nil {
		return d.err
	}
	return errDocCut
}

// expect consumes byte b, after white space.
func (d *docStream) expect(b byte) error {
	if d.peek() != b {
		return d.cut()
	}
	d.i++
	return nil
}

// object reads the top-level object: member calls fn with each member's
// key and value, except the member named list, an array, whose elements
// it gives to elem one by one (off: the element's file offset), or with
// elem nil passes over unvalidated (docStream.skip). The
// slices given are valid during the call.
func (d *docStream) object(list string, member func(key string, val []byte) error, elem func(off int64, val []byte) error) error {
	if err := d.expect('{'); err != nil {
		return err
	}
	if d.peek() == '}' {
		d.i++
		return nil
	}
	for {
		d.peek()
		indent := d.indent()
		k, err := d.value()
		if err != nil {
			return err
		}
		if !rawjson.IsString(k) {
			return d.cut()
		}
		key := rawjson.Str(k)
		if err := d.expect(':'); err != nil {
			return err
		}
		if key == list && d.peek() == '[' {
			d.i++
			jumped := false
			if elem == nil && indent >= 0 {
				if jumped, err = d.jumpArray(indent); err != nil {
					return err
				}
			}
			if !jumped {
				if err := d.array(elem); err != nil {
					return err
				}
			}
		} else {
			v, err := d.value()
			if err != nil {
				return err
			}
			if err := member(key, v); err != nil {
				return err
			}
		}
		switch d.peek() {
		case ',':
			d.i++
		case '}':
			d.i++
			return nil
		default:
			return d.cut()
		}
	}
}

// array reads the elements of an array whose '[' is read.
func (d *docStream) array(elem func(off int64, val []byte) error) error {
	if d.peek() == ']' {
		d.i++
		return nil
	}
	for {
		if elem == nil {
			if err := d.skip(); err != nil {
				return err
			}
		} else {
			off := d.base + int64(rawjson.SkipWS(d.buf, d.i))
			v, err := d.value()
			if err != nil {
				return err
			}
			if err := elem(off, v); err != nil {
				return err
			}
		}
		switch d.peek() {
		case ',':
			d.i++
		case ']':
			d.i++
			return nil
		default:
			return d.cut()
		}
	}
}
