//go:build !amd64 || purego

package rawjson

import (
	"encoding/binary"
	"math/bits"
)

// plainRun returns the index of the first byte of b that is '"', '\\' or a
// control byte, or the index where fewer than eight bytes are left: the
// caller goes on from there a byte at a time. (On amd64 it also steps over
// two-byte escapes.)
func plainRun(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		if m := specialMask(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	return i
}
