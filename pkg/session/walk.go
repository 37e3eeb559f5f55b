package session

import (
	"bytes"
	"strconv"

	"github.com/tidwall/gjson"
)

// A fast walker for JSON that is already known to be valid: it finds the
// extent of each member or element by skipping, and unescapes nothing it is
// not asked for. gjson's ForEach materialises every string value it passes;
// on session lines, which are mostly long texts, that costs more than
// validating them.

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
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

// Members calls fn with the raw key (without quotes, still escaped) and
// the raw value of each member of the valid JSON object obj, until fn
// returns false.
func Members(obj []byte, fn func(key, val []byte) bool) {
	i := skipWS(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return
	}
	i++
	for {
		i = skipWS(obj, i)
		if i >= len(obj) || obj[i] != '"' {
			return
		}
		ks := i
		i = skipString(obj, i)
		key := obj[ks+1 : i-1]
		i = skipWS(obj, i)
		i = skipWS(obj, i+1) // past ':'
		vs := i
		i = skipValue(obj, i)
		if !fn(key, obj[vs:i]) {
			return
		}
		i = skipWS(obj, i)
		if i >= len(obj) || obj[i] != ',' {
			return
		}
		i++
	}
}

// Elements calls fn with each element of the valid JSON array arr.
func Elements(arr []byte, fn func(val []byte) bool) {
	i := skipWS(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return
	}
	i++
	for {
		i = skipWS(arr, i)
		if i >= len(arr) || arr[i] == ']' {
			return
		}
		vs := i
		i = skipValue(arr, i)
		if !fn(arr[vs:i]) {
			return
		}
		i = skipWS(arr, i)
		if i >= len(arr) || arr[i] != ',' {
			return
		}
		i++
	}
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
