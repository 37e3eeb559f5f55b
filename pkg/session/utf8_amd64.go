//go:build !purego

package session

import "unicode/utf8"

// validUTF8 reports whether b is valid UTF-8, 32 bytes a turn where the
// processor has AVX2 (in utf8_amd64.s).
func validUTF8(b []byte) bool {
	if haveAVX2 {
		return validUTF8AVX2(b)
	}
	return utf8.Valid(b)
}

var haveAVX2 = hasAVX2()

//go:noescape
func validUTF8AVX2(b []byte) bool

func hasAVX2() bool
