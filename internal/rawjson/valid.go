package rawjson

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// Valid reports whether b is one complete JSON value (RFC 8259), with
// surrounding white space. Bytes inside strings are not required to be
// valid UTF-8: SPEC §2 keeps such bytes exactly as written (encoding/json
// accepts them too; gjson's validator does not); ValidUTF8 checks them
// apart. String bodies, which are most of a session's bytes, are scanned
// 64 bytes a turn with AVX2, else 16 with SSE2 (run_amd64.s), 8 in
// portable Go.
func Valid(b []byte) bool {
	i, ok := Value(b, SkipWS(b, 0), 0)
	return ok && SkipWS(b, i) == len(b)
}

// maxDepth bounds nesting, as encoding/json does.
const maxDepth = 10000

// Value validates the value at b[i], nested depth deep, and returns the
// index after it.
func Value(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		return str(b, i)
	case c == '{':
		return Object(b, i, depth, nil)
	case c == '[':
		return Array(b, i, depth, nil)
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	case c == '-' || c >= '0' && c <= '9':
		return number(b, i)
	}
	return i, false
}

// Object validates the object at b[i] == '{', nested depth deep. For each
// member it calls fn, when not nil, with the key (unescaped: the bytes of
// b, unless the key holds an escape) and the index where the value
// starts; fn validates the value itself (Value does, one level deeper;
// b[vs] exists) and returns the index after it, or -1 when it is not
// valid. Without fn, Value validates every member. So a caller walks what
// it needs and validates all, in one pass over the bytes.
func Object(b []byte, i, depth int, fn func(key []byte, vs int) int) (int, bool) {
	if depth >= maxDepth {
		return i, false
	}
	i = SkipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return i, false
		}
		var key []byte
		var ok bool
		if e := plainShort(b, i); e >= 0 { // most keys
			key, i = b[i+1:e-1], e
		} else {
			ks := i
			if i, ok = strLong(b, i); !ok {
				return i, false
			}
			if key = b[ks+1 : i-1]; fn != nil && bytes.IndexByte(key, '\\') >= 0 {
				key = []byte(Str(b[ks:i]))
			}
		}
		i = SkipWS(b, i)
		if i >= len(b) || b[i] != ':' {
			return i, false
		}
		vs := SkipWS(b, i+1)
		if vs >= len(b) {
			return vs, false
		}
		if fn == nil {
			if i, ok = Value(b, vs, depth+1); !ok {
				return i, false
			}
		} else if i = fn(key, vs); i < 0 {
			return vs, false
		}
		i = SkipWS(b, i)
		if i >= len(b) {
			return i, false
		}
		if b[i] == '}' {
			return i + 1, true
		}
		if b[i] != ',' {
			return i, false
		}
		i = SkipWS(b, i+1)
	}
}

// Array validates the array at b[i] == '[' as object does an object,
// calling fn, when not nil, with the index where each element starts.
func Array(b []byte, i, depth int, fn func(vs int) int) (int, bool) {
	if depth >= maxDepth {
		return i, false
	}
	i = SkipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		if i >= len(b) {
			return i, false
		}
		vs := i
		var ok bool
		if fn == nil {
			if i, ok = Value(b, vs, depth+1); !ok {
				return i, false
			}
		} else if i = fn(vs); i < 0 {
			return vs, false
		}
		i = SkipWS(b, i)
		if i >= len(b) {
			return i, false
		}
		if b[i] == ']' {
			return i + 1, true
		}
		if b[i] != ',' {
			return i, false
		}
		i = SkipWS(b, i+1)
	}
}

func literal(b []byte, i int, lit string) (int, bool) {
	if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
		return i + len(lit), true
	}
	return i, false
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

func number(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

const (
	ones   = 0x0101010101010101
	highs  = 0x8080808080808080
	quotes = 0x2222222222222222 // '"'
	slashs = 0x5c5c5c5c5c5c5c5c // '\\'
)

// special reports whether any byte of w is '"', '\\' or a control byte.
func special(w uint64) bool { return specialMask(w) != 0 }

// specialMask sets the high bit of the first byte of w (in memory order)
// that is '"', '\\' or a control byte, and maybe of bytes after it: borrows
// run only towards later bytes, so the lowest mark is exact.
func specialMask(w uint64) uint64 {
	q, s := w^quotes, w^slashs
	return ((q-ones)&^q | (s-ones)&^s | (w-0x20*ones)&^w) & highs
}

// plainShort returns the index after the string that starts at
// b[i] == '"' when it ends within sixteen bytes and holds no escape or
// control byte, as most keys, ids and names do; else -1. Two words find
// its quote, without the setup of a call to plainRun.
func plainShort(b []byte, i int) int {
	for j := i + 1; j <= i+9 && j+8 <= len(b); j += 8 {
		if m := specialMask(binary.LittleEndian.Uint64(b[j:])); m != 0 {
			if e := j + bits.TrailingZeros64(m)/8; b[e] == '"' {
				return e + 1
			}
			return -1
		}
	}
	return -1
}

// str returns the index after the string that starts at b[i] == '"'.
func str(b []byte, i int) (int, bool) {
	if e := plainShort(b, i); e >= 0 {
		return e, true
	}
	return strLong(b, i)
}

// strLong is str for a string that plainShort does not end.
func strLong(b []byte, i int) (int, bool) {
	i++
	for {
		i += plainRun(b[i:])
		for len(b)-i < 16 && i+8 <= len(b) && !special(binary.LittleEndian.Uint64(b[i:])) {
			i += 8 // the last bytes, which plainRun leaves
		}
		if i >= len(b) {
			return i, false
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, true
		case c == '\\':
			if i+1 >= len(b) {
				return i, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return i, false
				}
				for _, h := range b[i+2 : i+6] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return i, false
					}
				}
				i += 6
			default:
				return i, false
			}
		case c < 0x20:
			return i, false
		default:
			i++
		}
	}
}
