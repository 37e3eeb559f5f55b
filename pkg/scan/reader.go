package scan

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// Reader reads the lines of a session file with their byte offsets. It has
// no line-length limit and tells a terminated line from an unterminated
// final stretch (bufio.Scanner cannot: it returns both alike).
type Reader struct {
	br   *bufio.Reader
	off  int64
	line int
	long []byte
	// sec is the source when it can be read at offsets (a file section,
	// a file, a store's reader), read ahead to size a long line's buffer
	// once (base: the offset its first byte is at).
	sec  io.ReaderAt
	base int64
	prev []byte // the line Next returned last, for the poison build
}

// readBuffer is the size of a Reader's buffer: lines longer than it are
// assembled, not refused.
const readBuffer = 256 << 10

// NewReader reads r, whose first byte is at offset off of the file. An r
// that knows its size (a file section) gets a buffer no larger than it
// needs: fsck reads thousands of small files.
func NewReader(r io.Reader, off int64) *Reader {
	n := readBuffer
	if s, ok := r.(interface{ Size() int64 }); ok && s.Size() < readBuffer {
		n = int(s.Size()) + 1 // bufio keeps a minimum of its own
	}
	rd := &Reader{br: bufio.NewReaderSize(r, n), off: off}
	rd.sec, _ = r.(io.ReaderAt)
	rd.base = off
	return rd
}

// Reset makes r read src from its start, at offset off, keeping r's
// buffer: a reader of many files allocates it once. What held a huge line
// is let go: it is not kept for the next file.
func (r *Reader) Reset(src io.Reader, off int64) {
	if PoisonBuild {
		Poison(r.prev)
		r.prev = nil
	}
	r.br.Reset(src)
	r.off, r.line, r.long = off, 0, r.long[:0]
	r.sec, _ = src.(io.ReaderAt)
	r.base = off
	if cap(r.long) > maxKept {
		r.long = nil
	}
}

// Again is Reset for another pass over the same source: the buffer of a
// long line is kept, since the pass meets the line again (a second one
// was made beside the first, garbage not yet collected: twice the line).
func (r *Reader) Again(src io.Reader, off int64) {
	long := r.long
	r.Reset(src, off)
	r.long = long[:0]
}

// maxKept is the largest long-line buffer a Reset keeps.
const maxKept = 4 << 20

// Next returns the next line without its "\n", the offset of its first byte,
// and whether it ended with "\n". The line is valid until the next call. At
// the end it returns io.EOF.
func (r *Reader) Next() (line []byte, off int64, terminated bool, err error) {
	if PoisonBuild {
		Poison(r.prev) // the line before is done with
		r.prev = nil
	}
	off = r.off
	b, err := r.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		if n := r.lineLen(off + int64(len(b))); n > cap(r.long) {
			r.long = make([]byte, 0, n) // once, not by steps that leave 4× the line behind
		}
		r.long = append(r.long[:0], b...)
		for errors.Is(err, bufio.ErrBufferFull) {
			b, err = r.br.ReadSlice('\n')
			r.long = append(r.long, b...)
		}
		b = r.long
	}
	r.off += int64(len(b))
	if PoisonBuild {
		r.prev = b
	}
	switch {
	case err == nil:
		r.line++
		return b[:len(b)-1], off, true, nil
	case errors.Is(err, io.EOF) && len(b) > 0:
		r.line++
		return b, off, false, nil
	default:
		return nil, off, false, err
	}
}

// LineNo is the 1-based number of the line Next returned last.
func (r *Reader) LineNo() int { return r.line }

// Offset is the offset after the last byte read.
func (r *Reader) Offset() int64 { return r.off }

// MessageLines calls fn with each message line of r (what panto-replay
// prints and panto-turn reads), skipping blank lines, with its line number.
func MessageLines(r io.Reader, fn func(n int, line []byte) error) error {
	rd := NewReader(r, 0)
	for {
		line, _, _, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if err := fn(rd.LineNo(), line); err != nil {
			return err
		}
	}
}

// lineLen is the length of the line that starts at offset r.off, to its
// "\n" included, when its first from-r.off bytes are read already; 0 when
// the source is no file section.
func (r *Reader) lineLen(from int64) int {
	if r.sec == nil {
		return 0
	}
	return int(from - r.off + restOfLine(r.sec, from-r.base))
}

// restOfLine is the number of bytes of sec from at to the next "\n",
// included (to the end when there is none), read ahead in small steps.
func restOfLine(sec io.ReaderAt, at int64) int64 {
	var buf [64 << 10]byte
	for start := at; ; {
		k, err := sec.ReadAt(buf[:], at)
		if i := bytes.IndexByte(buf[:k], '\n'); i >= 0 {
			return at + int64(i) + 1 - start
		}
		at += int64(k)
		if err != nil || k == 0 {
			return at - start
		}
	}
}
