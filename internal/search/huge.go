package search

import (
	"bytes"
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

// A line longer than maxLine (a tool's result of hundreds of MB) is never
// held whole: it is read as a stream, the text of its string values
// decoded into a small window and matched there, so memory stays flat.
// Keys, and values that are ids or opaque data, are not searched; the
// role, kind and tool of its hit are told from the fields met before the
// match ("type", "role", "name"), and one hit is given for the line.

// skipValues are keys whose string values are ids or opaque data.
var skipValues = map[string]bool{
	"id": true, "uuid": true, "parentUuid": true, "parentId": true, "sessionId": true, "tool_use_id": true,
	"toolUseId": true, "toolCallId": true, "call_id": true, "signature": true, "encrypted_content": true,
	"data": true, "timestamp": true, "cwd": true, "type": true, "role": true, "model": true, "requestId": true,
}

// captured are keys whose (short) values tell what a hit is.
var captured = map[string]bool{"type": true, "role": true, "name": true, "toolName": true, "timestamp": true, "uuid": true, "id": true, "model": true}

const window = 64 << 10

type stream struct {
	q        *Query
	stack    []byte // containers open: '{' or '['
	wantKey  bool   // the next string in the object is a key
	inStr    bool
	isKey    bool
	esc      int // 0; 1 after a backslash; 2..5 reading \u's hex digits
	hex      rune
	high     rune // a high surrogate waiting for its low half
	key      []byte
	cur      []byte // the key of the value being read
	capture  []byte
	keep     bool // the string being read is searched
	capt     bool // and its value is kept (a captured key's)
	top      bool // the value being read is the line's own (not nested)
	one      [utf8.UTFMax]byte
	win      []byte
	carry    int
	words    []bool
	res      []bool
	excluded bool
	fields   map[string]string // the last value of each captured key
	got      bool              // a positive term matched: the hit is taken
	hit      Piece
	spans    [][2]int
	snip     string
	ts, id   string
}

func newStream(q *Query) *stream {
	return &stream{q: q, words: make([]bool, len(q.words)), res: make([]bool, len(q.res)), fields: map[string]string{}}
}

func (s *stream) feed(b []byte) {
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !s.inStr {
			switch c {
			case '{':
				s.stack = append(s.stack, '{')
				s.wantKey = true
			case '[':
				s.stack = append(s.stack, '[')
				s.wantKey = false
			case '}', ']':
				if len(s.stack) > 0 {
					s.stack = s.stack[:len(s.stack)-1]
				}
				s.wantKey = false
			case ',':
				s.wantKey = len(s.stack) > 0 && s.stack[len(s.stack)-1] == '{'
			case ':':
				s.wantKey = false
			case '"':
				s.inStr, s.isKey = true, s.wantKey
				if s.isKey {
					s.key = s.key[:0]
				} else {
					s.keep = !skipValues[string(s.cur)]
					s.capt = captured[string(s.cur)]
					s.top = len(s.stack) == 1
					s.capture = s.capture[:0]
				}
			}
			continue
		}
		if s.esc == 0 {
			if c == '"' {
				s.endString()
				continue
			}
			if c != '\\' {
				// a run of plain bytes, at once
				j := i
				for j < len(b) && b[j] != '"' && b[j] != '\\' {
					j++
				}
				s.out(b[i:j])
				i = j - 1
				continue
			}
			s.esc = 1
			continue
		}
		if s.esc == 1 {
			s.esc = 0
			switch c {
			case 'u':
				s.esc, s.hex = 2, 0
			case 'n':
				s.out1('\n')
			case 't':
				s.out1('\t')
			case 'r':
				s.out1('\r')
			case 'b':
				s.out1('\b')
			case 'f':
				s.out1('\f')
			default:
				s.out1(c)
			}
			continue
		}
		s.hex = s.hex<<4 | rune(unhex(c))
		if s.esc++; s.esc == 6 {
			s.esc = 0
			s.rune(s.hex)
		}
	}
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c|0x20 >= 'a':
		return c | 0x20 - 'a' + 10
	}
	return 0
}

func (s *stream) rune(r rune) {
	if s.high != 0 {
		h := s.high
		s.high = 0
		if utf16.IsSurrogate(r) {
			s.out(utf8.AppendRune(s.one[:0], utf16.DecodeRune(h, r)))
			return
		}
		s.out(utf8.AppendRune(s.one[:0], utf8.RuneError))
	}
	if r >= 0xd800 && r < 0xdc00 {
		s.high = r
		return
	}
	s.out(utf8.AppendRune(s.one[:0], r))
}

func (s *stream) out1(c byte) {
	s.one[0] = c
	s.out(s.one[:1])
}

func (s *stream) out(b []byte) {
	if s.isKey {
		if len(s.key)+len(b) <= 64 {
			s.key = append(s.key, b...)
		}
		return
	}
	if s.capt && len(s.capture)+len(b) <= 128 {
		s.capture = append(s.capture, b...)
	}
	if !s.keep {
		return
	}
	for len(b) > 0 {
		n := min(len(b), window-len(s.win))
		s.win = append(s.win, b[:n]...)
		b = b[n:]
		if len(s.win) == window {
			s.match()
		}
	}
}

func (s *stream) endString() {
	s.inStr = false
	if s.isKey {
		s.cur = append(s.cur[:0], s.key...)
		return
	}
	if s.capt {
		k := string(s.cur)
		if k == "timestamp" && s.top {
			s.ts = string(s.capture) // the line's time, wherever it is in it
		}
		if _, seen := s.fields[k]; !seen || k == "type" || k == "role" || k == "name" || k == "toolName" {
			s.fields[k] = string(s.capture)
		}
	}
	if s.keep {
		s.win = append(s.win, '\n') // no match across two values
		if len(s.win) >= window {
			s.match()
		}
	}
	s.keep = false
}

// match looks at the window, then keeps its tail (a match may straddle).
func (s *stream) match() {
	t := text{s: string(s.win)}
	var spans [][2]int
	for i, l := range s.q.words {
		for from := 0; ; {
			a, b := t.index(l, from)
			if a < 0 {
				break
			}
			s.words[i] = true
			if len(spans) < maxSpans {
				spans = append(spans, [2]int{a, b})
			}
			from = b
		}
	}
	for i, re := range s.q.res {
		if l := s.q.reLit[i]; l.text != "" {
			if a, _ := t.index(l, 0); a < 0 {
				continue // every match holds it: none in this window
			}
		}
		for _, m := range re.FindAllStringIndex(t.s, maxSpans) {
			s.res[i] = true
			spans = append(spans, [2]int{m[0], m[1]})
		}
	}
	for _, l := range s.q.not {
		if a, _ := t.index(l, 0); a >= 0 {
			s.excluded = true
		}
	}
	if !s.got && len(spans) > 0 {
		s.got = true
		s.snip, s.spans = Snippet(t.s, merge(spans))
		s.hit = s.piece()
	}
	keep := 0
	for _, l := range s.q.words {
		keep = max(keep, 4*len(l.text))
	}
	keep = min(keep+64, len(s.win))
	n := copy(s.win, s.win[len(s.win)-keep:])
	s.win = s.win[:n]
}

// piece tells what the text being read is, from the fields met so far.
func (s *stream) piece() Piece {
	typ, role := s.fields["type"], s.fields["role"]
	tool := s.fields["name"]
	if tool == "" {
		tool = s.fields["toolName"]
	}
	switch typ {
	case "tool_result", "toolResult", "function_call_output", "custom_tool_call_output":
		return Piece{Role: "tool", Kind: KindToolResult, Tool: s.fields["toolName"]}
	case "tool_use", "toolUse", "toolCall", "function_call", "custom_tool_call":
		return Piece{Role: "assistant", Kind: KindToolInput, Tool: tool}
	case "thinking", "reasoning", "reasoning_text", "summary_text":
		return Piece{Role: "assistant", Kind: KindThinking}
	}
	switch role {
	case "toolResult":
		return Piece{Role: "tool", Kind: KindToolResult, Tool: s.fields["toolName"]}
	case "developer":
		role = "system"
	case "":
		role = "user"
	}
	return Piece{Role: role, Kind: KindText}
}

// done ends the line: whether it matched, as Query.Match decides.
func (s *stream) done() bool {
	if len(s.win) > 0 || !s.got {
		s.match()
	}
	if s.excluded || !s.got {
		return false
	}
	for _, ok := range s.words {
		if !ok {
			return false
		}
	}
	for _, ok := range s.res {
		if !ok {
			return false
		}
	}
	return true
}

// huge searches a line too long to hold: data is its start, the rest is
// read from r through the worker's small buffer. It returns what was read
// past the line's end.
func (w *worker) huge(r io.Reader, data []byte) ([]byte, error) {
	if err := w.knowLate(); err != nil {
		return nil, err
	}
	st := newStream(w.q)
	st.feed(data)
	chunk := w.buf[:cap(w.buf)]
	var rest []byte
	for {
		if err := w.ctx.Err(); err != nil {
			return nil, err
		}
		n, err := r.Read(chunk)
		w.j.read += int64(n)
		if i := bytes.IndexByte(chunk[:n], '\n'); i >= 0 {
			st.feed(chunk[:i])
			rest = chunk[i+1 : n]
			break
		}
		st.feed(chunk[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if st.ts != "" {
		w.lastTS = st.ts
	}
	if !st.done() {
		return rest, nil
	}
	p := st.hit
	fl := &w.opt.Filter
	if fl.Roles != nil && !fl.Roles[p.Role] || fl.Kinds != nil && !fl.Kinds[p.Kind] || fl.Tool != "" && !equalFoldString(p.Tool, fl.Tool) {
		return rest, nil
	}
	if !w.inTime() || !w.ofModel(st.fields["model"]) {
		return rest, nil
	}
	e := &Entry{ID: st.fields["uuid"], Timestamp: st.ts}
	if e.ID == "" {
		e.ID = st.fields["id"]
	}
	h := w.hit(e, &p, nil, 0)
	h.Snippet, h.Matches = st.snip, st.spans
	select {
	case w.j.hits <- h:
	case <-w.ctx.Done():
		return nil, w.ctx.Err()
	}
	return rest, nil
}

func equalFoldString(a, b string) bool { return len(a) == len(b) && lowerASCII(a) == lowerASCII(b) }
