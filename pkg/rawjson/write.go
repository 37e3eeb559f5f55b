package rawjson

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// AppendString appends s as a JSON string, without HTML escaping, as
// encoding/json writes it (invalid UTF-8 as U+FFFD, U+2028 and U+2029
// escaped).
func AppendString(dst []byte, s string) []byte {
	if plain(s) { // most strings: no escape, one copy
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"')
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(dst, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
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

// plain reports whether encoding/json writes s as it is, between quotes:
// no byte it escapes, valid UTF-8, no U+2028 or U+2029.
func plain(s string) bool {
	ascii := true
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20, c == '"', c == '\\':
			return false
		case c >= 0x80:
			ascii = false
		}
	}
	return ascii || utf8.ValidString(s) && !strings.Contains(s, "\u2028") && !strings.Contains(s, "\u2029")
}
