// Package tty makes strings that came from a log, a database row or a file
// name safe to show on a terminal: control characters (C0, DEL, C1) and
// bytes that are not UTF-8 are written as Go-style escapes (and so are the
// bidirectional overrides and isolates, which reorder a line), so a cwd, a
// model name or a reply's text can neither move the cursor, set a window
// title, write the clipboard (OSC 52) nor forge a line of a table. Every
// human-readable output goes through it; JSON and the session bytes
// themselves never do (they stay exact).
package tty

import (
	"strconv"
	"unicode/utf8"
)

// Line returns s fit for one line of output (a table cell, a warning, an
// error): every control character is escaped, newline and tab included.
func Line(s string) string { return escape(s, false) }

// Text returns s fit for running text (a transcript): newlines and tabs
// stay, every other control character is escaped.
func Text(s string) string { return escape(s, true) }

// safe reports whether the byte is shown as it is, without a look at what
// follows: printable ASCII.
func safe(c byte, text bool) bool {
	return c >= 0x20 && c < 0x7f || text && (c == '\n' || c == '\t')
}

func escape(s string, text bool) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if safe(c, text) {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			break
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || r >= 0x80 && r < 0xa0 || bidi(r) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s // the common case: nothing to escape, nothing allocated
	}
	b := make([]byte, 0, len(s)+16)
	b = append(b, s[:i]...)
	for i < len(s) {
		c := s[i]
		switch {
		case safe(c, text):
			b = append(b, c)
			i++
		case c == '\n':
			b = append(b, `\n`...)
			i++
		case c == '\t':
			b = append(b, `\t`...)
			i++
		case c == '\r':
			b = append(b, `\r`...)
			i++
		case c < utf8.RuneSelf: // the rest of C0, and DEL
			b = appendHex(append(b, `\x`...), uint64(c), 2)
			i++
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && n == 1: // not UTF-8: the byte itself
				b = appendHex(append(b, `\x`...), uint64(c), 2)
			case r < 0xa0 || bidi(r): // C1, and the marks that reorder text
				b = appendHex(append(b, `\u`...), uint64(r), 4)
			default:
				b = append(b, s[i:i+n]...)
			}
			i += n
		}
	}
	return string(b)
}

// bidi reports whether r is a bidirectional mark, embedding, override or
// isolate: shown raw, it reorders what follows on the line, so a title can
// make a cell (or the next cell) read as something else ("Trojan Source").
func bidi(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f ||
		r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

func appendHex(b []byte, v uint64, width int) []byte {
	h := strconv.FormatUint(v, 16)
	for k := len(h); k < width; k++ {
		b = append(b, '0')
	}
	return append(b, h...)
}
