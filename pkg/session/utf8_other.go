//go:build !amd64 || purego

package session

import "unicode/utf8"

// validUTF8 reports whether b is valid UTF-8 (in assembly on amd64).
func validUTF8(b []byte) bool { return utf8.Valid(b) }
