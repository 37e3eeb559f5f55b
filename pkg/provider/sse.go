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
	Data  []byte // the "data:" lines joined with "\n"; valid until the next event
	Error []byte // a non-standard "error:" field (llama.cpp), if any
}

// SSEReader reads server-sent events (the WHATWG grammar): lines end in
// LF, CRLF or CR-LF tolerant; ":" starts a comment (keep-alives); a field's
// value loses one leading space; data lines join with "\n"; a blank line
// dispatches. A line, and the data of one event, are at most MaxLine
// bytes: a server that sends more (an endless line) is an error, never
// memory without bound.
type SSEReader struct {
	br   *bufio.Reader
	buf  []byte
	data []byte // reused for every event's data
}

// MaxLine bounds a line of a stream and the data of one event: far above
// any event a provider sends (deltas of a few bytes to a few KiB).
const MaxLine = 16 << 20

// ErrLineTooLong is a stream line or event over MaxLine bytes.
var ErrLineTooLong = errors.New("a line of the stream is longer than 16 MiB")

// NewSSEReader reads events from r.
func NewSSEReader(r io.Reader) *SSEReader {
	return &SSEReader{br: bufio.NewReaderSize(r, 64<<10)}
}

func (s *SSEReader) line() ([]byte, error) {
	b, err := s.br.ReadSlice('\n')
	if err == nil {
		return bytes.TrimRight(b, "\r\n"), nil // the common case: no copy
	}
	s.buf = append(s.buf[:0], b...)
	for errors.Is(err, bufio.ErrBufferFull) { // a long line
		if len(s.buf) > MaxLine {
			return nil, ErrLineTooLong
		}
		b, err = s.br.ReadSlice('\n')
		s.buf = append(s.buf, b...)
	}
	if err != nil && (len(s.buf) == 0 || !errors.Is(err, io.EOF)) {
		return nil, err
	}
	return bytes.TrimRight(s.buf, "\r\n"), nil
}

// Next returns the next event. A stream that ends in the middle of an event
// dispatches what it has; then Next returns io.EOF.
func (s *SSEReader) Next() (Event, error) {
	ev := Event{Data: s.data[:0]}
	defer func() { s.data = ev.Data[:0] }()
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
			ev.Name, has = eventName(value), true
		case "data":
			if hasData {
				ev.Data = append(ev.Data, '\n')
			}
			if len(ev.Data)+len(value) > MaxLine {
				return Event{}, ErrLineTooLong
			}
			ev.Data = append(ev.Data, value...)
			has, hasData = true, true
		case "error":
			ev.Error, has = append([]byte(nil), value...), true
		}
	}
}

// eventName returns the name of an event, without allocating for the names
// providers send thousands of times a turn.
func eventName(b []byte) string {
	switch string(b) {
	case "content_block_delta":
		return "content_block_delta"
	case "content_block_start":
		return "content_block_start"
	case "content_block_stop":
		return "content_block_stop"
	case "message_delta":
		return "message_delta"
	case "ping":
		return "ping"
	}
	return string(b)
}
