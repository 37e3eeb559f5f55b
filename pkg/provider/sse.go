package provider

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// Event is one server-sent event.
type Event struct {
	Name  string // the "event:" field; "" for data-only streams
	Data  []byte // the "data:" lines joined with "\n"
	Error []byte // a non-standard "error:" field (llama.cpp), if any
}

// SSEReader reads server-sent events (the WHATWG grammar): lines end in
// LF, CRLF or CR-LF tolerant; ":" starts a comment (keep-alives); a field's
// value loses one leading space; data lines join with "\n"; a blank line
// dispatches. Lines have no length limit.
type SSEReader struct {
	br  *bufio.Reader
	buf []byte
}

// NewSSEReader reads events from r.
func NewSSEReader(r io.Reader) *SSEReader {
	return &SSEReader{br: bufio.NewReaderSize(r, 64<<10)}
}

func (s *SSEReader) line() ([]byte, error) {
	s.buf = s.buf[:0]
	for {
		b, err := s.br.ReadSlice('\n')
		s.buf = append(s.buf, b...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && (len(s.buf) == 0 || !errors.Is(err, io.EOF)) {
			return nil, err
		}
		return bytes.TrimRight(s.buf, "\r\n"), nil
	}
}

// Next returns the next event. A stream that ends in the middle of an event
// dispatches what it has; then Next returns io.EOF.
func (s *SSEReader) Next() (Event, error) {
	var ev Event
	has, hasData := false, false
	for {
		line, err := s.line()
		if err != nil {
			if errors.Is(err, io.EOF) && has {
				return ev, nil
			}
			return Event{}, err
		}
		if len(line) == 0 {
			if has {
				return ev, nil
			}
			continue
		}
		if line[0] == ':' {
			continue // comment: a keep-alive
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			ev.Name, has = string(value), true
		case "data":
			if hasData {
				ev.Data = append(ev.Data, '\n')
			}
			ev.Data = append(ev.Data, value...)
			has, hasData = true, true
		case "error":
			ev.Error, has = append([]byte(nil), value...), true
		}
	}
}
