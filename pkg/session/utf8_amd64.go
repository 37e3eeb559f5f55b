//go:build !purego

package session

import "unicode/utf8"

// validUTF8 reports whether b is valid UTF-8, sixteen bytes a turn where
// the processor has SSSE3 (in utf8_amd64.s).
func validUTF8(b []byte) bool {
	if haveSSSE3 {
		return validUTF8SSSE3(b)
	}
	return utf8.Valid(b)
}

var haveSSSE3 = hasSSSE3()

//go:noescape
func validUTF8SSSE3(b []byte) bool

func hasSSSE3() bool
