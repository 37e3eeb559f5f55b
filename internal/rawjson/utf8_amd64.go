//go:build !purego

package rawjson

import (
	"unicode/utf8"

	"github.com/panto-dev/panto/internal/cpuid"
)

// ValidUTF8 reports whether b is valid UTF-8, 32 bytes a turn where the
// processor has AVX2 (in utf8_amd64.s).
func ValidUTF8(b []byte) bool {
	if haveAVX2 {
		return validUTF8AVX2(b)
	}
	return utf8.Valid(b)
}

var haveAVX2 = cpuid.AVX2 // a variable: the tests turn it off

//go:noescape
func validUTF8AVX2(b []byte) bool
