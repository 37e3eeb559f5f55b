//go:build !purego

package search

import "github.com/panto-dev/panto/internal/cpuid"

// haveAVX2 says whether pairBlocks looks at 32 bytes a turn (else 16,
// with SSE2, which every amd64 processor has).
var haveAVX2 = cpuid.AVX2

// pairBlocks returns the first i, 0 <= i < len(b)-d, such that
// b[i]|m1 == c1 and b[i+d]|m2 == c2, looking at sixteen (or 32) places a
// turn; or the index where fewer than sixteen places are left, from
// which the caller looks one at a time. In pair_amd64.s.
//
//go:noescape
func pairBlocks(b []byte, d int, c1, c2, m1, m2 byte) int
