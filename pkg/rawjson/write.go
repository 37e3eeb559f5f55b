package rawjson

import (
	"bytes"
	"encoding/json"
)

// AppendString appends s as a JSON string, without HTML escaping.
func AppendString(dst []byte, s string) []byte {
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
