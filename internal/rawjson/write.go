package rawjson

import (
	"bytes"
	"encoding/json"
	"slices"
	"unicode/utf8"
)

// AppendString appends s as a JSON string, as encoding/json writes it
// without HTML escaping, except that bytes that are not UTF-8 are kept as
// they are (encoding/json writes U+FFFD for them): a cwd, a path or a
// model name from a Latin-1 system is written back byte for byte, as the
// session format keeps every byte (SPEC §10).
func AppendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = slices.Grow(dst, len(s)+2) // one growth, however long s is (a 200 MB tool result)
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r != '\u2028' && r != '\u2029' {
				i += n // a character, or a byte that is not UTF-8: as it is
				continue
			}
			dst = append(append(dst, s[start:i]...), `\u202`...)
			dst = append(dst, hex[r&0xf])
			i += n
			start = i
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		i++
		start = i
	}
	return append(append(dst, s[start:]...), '"')
}

// Compact returns JSON text without insignificant white space. Field
// order, escapes, numbers and string bytes (invalid UTF-8 included) are kept.
func Compact(raw []byte) ([]byte, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
