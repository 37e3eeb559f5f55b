package rawjson

import (
	"bytes"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// A fast walker for JSON that is already known to be valid: it finds the
// extent of each member or element by skipping, and unescapes nothing it is
// not asked for. gjson's ForEach materialises every string value it passes;
// on session lines, which are mostly long texts, that costs more than
// validating them.

func SkipWS(b []byte, i int) int {
	for i < len(b) && b[i] <= ' ' && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string that starts at b[i] == '"'.
func skipString(b []byte, i int) int {
	i++
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return len(b)
		}
		k := i + j
		n := 0
		for p := k - 1; p >= i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return k + 1
		}
		i = k + 1
	}
}

// Skip returns the index after the value that starts at b[i], found by
// its strings and nesting alone, not validated: len(b) when it does not end
// in b (nor, for a number or a literal, before it).
func Skip(b []byte, i int) int { return skipValue(b, i) }

// skipValue returns the index after the value that starts at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\r' && b[i] != '\n' {
		i++
	}
	return i
}

// eachMember walks the valid JSON object that starts at or after b[i].
// For each member it calls fn with the raw key and the index where the
// Value starts; fn returns the index after the value (having walked it
// itself, or skipped it), or -1 to stop. eachMember returns the index after
// the object, or -1 when stopped.
func eachMember(b []byte, i int, fn func(key []byte, vs int) int) int {
	i = SkipWS(b, i)
	if i >= len(b) || b[i] != '{' {
		return -1
	}
	i++
	for {
		i = SkipWS(b, i)
		if i >= len(b) {
			return -1
		}
		if b[i] == '}' {
			return i + 1
		}
		if b[i] != '"' {
			return -1
		}
		ks := i
		i = skipString(b, i)
		key := b[ks+1 : i-1]
		i = SkipWS(b, SkipWS(b, i)+1) // past ':'
		ve := fn(key, i)
		if ve < 0 {
			return -1
		}
		i = SkipWS(b, ve)
		if i < len(b) && b[i] == ',' {
			i++
		}
	}
}

// eachElement walks the valid JSON array that starts at b[i] the same way.
func eachElement(b []byte, i int, fn func(vs int) int) int {
	i = SkipWS(b, i)
	if i >= len(b) || b[i] != '[' {
		return -1
	}
	i++
	for {
		i = SkipWS(b, i)
		if i >= len(b) {
			return -1
		}
		if b[i] == ']' {
			return i + 1
		}
		ve := fn(i)
		if ve < 0 {
			return -1
		}
		i = SkipWS(b, ve)
		if i < len(b) && b[i] == ',' {
			i++
		}
	}
}

// Members calls fn with the raw key (without quotes, still escaped) and
// the raw value of each member of the valid JSON object obj, until fn
// returns false.
func Members(obj []byte, fn func(key, val []byte) bool) {
	eachMember(obj, 0, func(k []byte, vs int) int {
		ve := skipValue(obj, vs)
		if !fn(k, obj[vs:ve]) {
			return -1
		}
		return ve
	})
}

// Elements calls fn with each element of the valid JSON array arr.
func Elements(arr []byte, fn func(val []byte) bool) {
	eachElement(arr, 0, func(vs int) int {
		ve := skipValue(arr, vs)
		if !fn(arr[vs:ve]) {
			return -1
		}
		return ve
	})
}

// KeyIs reports whether a raw key equals name.
func KeyIs(key []byte, name string) bool {
	if bytes.IndexByte(key, '\\') < 0 {
		return string(key) == name
	}
	return gjson.Parse(`"`+string(key)+`"`).Str == name
}

// IsString reports whether the raw value is a JSON string.
func IsString(val []byte) bool { return len(val) > 0 && val[0] == '"' }

// Str unescapes a raw JSON string value; "" for anything else.
func Str(val []byte) string {
	if !IsString(val) || len(val) < 2 {
		return ""
	}
	if bytes.IndexByte(val, '\\') < 0 {
		return string(val[1 : len(val)-1])
	}
	return gjson.ParseBytes(val).Str
}

// Int reads a raw JSON number that is a whole non-negative integer.
func Int(val []byte) (int64, bool) {
	if len(val) == 0 || val[0] < '0' || val[0] > '9' {
		return 0, false
	}
	if len(val) <= 18 { // the common case, in a loop: no allocation, no overflow
		n := int64(0)
		for _, c := range val {
			if c < '0' || c > '9' {
				n = -1
				break
			}
			n = 10*n + int64(c-'0')
		}
		if n >= 0 {
			return n, true
		}
	}
	n, err := strconv.ParseInt(string(val), 10, 64)
	if err == nil {
		return n, true
	}
	// 1.0 or 1e3 are integers too.
	f, err := strconv.ParseFloat(string(val), 64)
	if err != nil || f >= 9e18 || f != float64(int64(f)) {
		return 0, false
	}
	return int64(f), true
}

// AppendText appends the text of the valid JSON string s (quotes included)
// to dst: Str without a string, for text that is only looked at.
func AppendText(dst, s []byte) []byte {
	s = s[1 : len(s)-1]
	for {
		i := bytes.IndexByte(s, '\\')
		if i < 0 {
			return append(dst, s...)
		}
		dst = append(dst, s[:i]...)
		c, n := s[i+1], 2
		switch c {
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		case 'u':
			r, n := hex4(s[i+2:]), 6
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if len(s) >= i+12 && s[i+6] == '\\' && s[i+7] == 'u' {
					r2 = hex4(s[i+8:])
				}
				if r = utf16.DecodeRune(r, r2); r != utf8.RuneError {
					n = 12
				}
			}
			dst = utf8.AppendRune(dst, r)
			s = s[i+n:]
			continue
		}
		dst = append(dst, c) // and '"', '\\', '/' as they are
		s = s[i+n:]
	}
}

// hex4 reads the four hex digits (already validated) that start h.
func hex4(h []byte) rune {
	var r rune
	for _, c := range h[:4] {
		switch {
		case c <= '9':
			c -= '0'
		case c <= 'F':
			c -= 'A' - 10
		default:
			c -= 'a' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}
