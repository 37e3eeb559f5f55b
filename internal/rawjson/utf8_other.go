//go:build !amd64 || purego

package rawjson

import "unicode/utf8"

// ValidUTF8 reports whether b is valid UTF-8 (in assembly on amd64).
func ValidUTF8(b []byte) bool { return utf8.Valid(b) }
