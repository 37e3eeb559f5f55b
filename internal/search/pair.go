package search

// indexPair returns the first i, 0 <= i < len(b)-d, such that
// b[i]|m1 == c1 and b[i+d]|m2 == c2, or -1. A mask of 0x20 with a
// lower-case letter finds both its cases (and nothing else); 0 finds the
// byte itself. Two bytes of a needle looked for at once, far apart in the
// needle and rare, leave few places to verify: what memchr's memmem does
// for ripgrep, with SIMD (pair_amd64.s).
func indexPair(b []byte, d int, c1, c2, m1, m2 byte) int {
	i := 0
	if len(b)-d >= 16 {
		i = pairBlocks(b, d, c1, c2, m1, m2)
	}
	for ; i+d < len(b); i++ {
		if b[i]|m1 == c1 && b[i+d]|m2 == c2 {
			return i
		}
	}
	return -1
}
