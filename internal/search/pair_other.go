//go:build !amd64 || purego

package search

import (
	"encoding/binary"
	"math/bits"
)

// pairBlocks returns the first i, 0 <= i < len(b)-d, such that
// b[i]|m1 == c1 and b[i+d]|m2 == c2, eight places a turn (a word at a
// time); or the index where fewer than eight places are left, from which
// the caller looks one at a time.
func pairBlocks(b []byte, d int, c1, c2, m1, m2 byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	r1, r2 := ones*uint64(c1), ones*uint64(c2)
	k1, k2 := ones*uint64(m1), ones*uint64(m2)
	n := len(b) - d
	if n < 8 {
		return 0
	}
	b1, b2 := b[:n], b[d:]
	i := 0
	for ; i+8 <= n; i += 8 {
		// a zero byte of x is a place where both bytes are as wanted
		x := ((binary.LittleEndian.Uint64(b1[i:i+8]) | k1) ^ r1) | ((binary.LittleEndian.Uint64(b2[i:i+8]) | k2) ^ r2)
		if z := (x - ones) &^ x & highs; z != 0 {
			// the lowest marked byte is a zero one (a borrow only
			// marks bytes above it)
			return i + bits.TrailingZeros64(z)/8
		}
	}
	return i
}
