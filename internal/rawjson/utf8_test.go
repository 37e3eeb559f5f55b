package rawjson

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

// refValidUTF8 is the oracle of TestValidUTF8, written from the Unicode
// Standard's table of well-formed byte sequences (§3.9, Table 3-7) and
// nothing else: it shares no code with unicode/utf8 or the AVX2 assembly,
// so a bug in either (or in the dispatch between them) is a disagreement.
func refValidUTF8(b []byte) bool {
	for i := 0; i < len(b); {
		c := b[i]
		n, lo, hi := 0, 0x80, 0xbf // continuation bytes that follow; the range of the first
		switch {
		case c <= 0x7f:
			i++
			continue
		case 0xc2 <= c && c <= 0xdf:
			n = 1
		case c == 0xe0:
			n, lo = 2, 0xa0 // no overlong three-byte forms
		case 0xe1 <= c && c <= 0xec, c == 0xee, c == 0xef:
			n = 2
		case c == 0xed:
			n, hi = 2, 0x9f // no surrogates
		case c == 0xf0:
			n, lo = 3, 0x90 // no overlong four-byte forms
		case 0xf1 <= c && c <= 0xf3:
			n = 3
		case c == 0xf4:
			n, hi = 3, 0x8f // nothing above U+10FFFF
		default: // 0x80–0xc1 (a continuation, an overlong lead), 0xf5–0xff
			return false
		}
		if i+n >= len(b) {
			return false // cut short
		}
		if d := int(b[i+1]); d < lo || d > hi {
			return false
		}
		for k := 2; k <= n; k++ {
			if d := b[i+k]; d < 0x80 || d > 0xbf {
				return false
			}
		}
		i += n + 1
	}
	return true
}

// TestValidUTF8: ValidUTF8 (AVX2 assembly where the processor has it, else
// unicode/utf8, or unicode/utf8 alone under purego) agrees with the oracle
// above on every sequence of up to four bytes drawn from the edges of the
// encoding, after text of one- or two-byte characters.
//
// Where a sequence sits matters to the AVX2 code only, which reads 64-byte
// blocks of two 32-byte lanes and carries the last bytes of one into the
// next: there each sequence is tried across every lane and block boundary
// and at the very end. The scalar code reads one character after another
// and keeps nothing from the characters before but a lead byte the
// sequence may continue, so it gets the places that differ in that: none
// before, whole characters before, and an "é" cut after its lead byte.
// Text of whole characters before a sequence leaves its validity to the
// sequence (UTF-8 synchronizes at every lead byte), and a cut "é" leaves it
// to 0xc3 and the sequence: the oracle is asked twice per sequence, not
// once per place. Both together keep the test at a
// few seconds under -race (it took 83 s there) and test no less: every
// sequence at every place that can matter to the code under test.
func TestValidUTF8(t *testing.T) { eachCPU(t, testValidUTF8) }

func testValidUTF8(t *testing.T) {
	edges := []byte{0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1, 0xec, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xff}
	simd := simdUTF8()
	var leads [][]byte
	for _, l := range []string{"a", "é"} {
		leads = append(leads, bytes.Repeat([]byte(l), 64))
	}
	buf := make([]byte, 0, 2*64+4)
	seq := make([]byte, 0, 4)
	var try func(n int)
	try = func(n int) {
		// What precedes seq is whole characters, or whole ones and the
		// lead byte of an "é" cut at an odd place, which seq continues.
		whole := refValidUTF8(seq)
		cut := refValidUTF8(append([]byte{0xc3}, seq...))
		places := []int{0, 3}
		if simd {
			places = []int{0, 13, 14, 15, 29, 30, 31, 45, 46, 47, 61, 62, 63, 64 - len(seq)}
		}
		for li, lead := range leads {
			for _, at := range places {
				b := append(append(buf[:0], lead[:at]...), seq...)
				want := whole
				if li == 1 && at%2 == 1 {
					want = cut
				}
				if got := ValidUTF8(b); got != want {
					t.Fatalf("ValidUTF8(% x) = %v, want %v", b, got, want)
				}
			}
		}
		if n == 4 {
			return
		}
		for _, c := range edges {
			seq = append(seq, c)
			try(n + 1)
			seq = seq[:len(seq)-1]
		}
	}
	try(0)
}

// TestRefValidUTF8: the oracle itself, on the cases Table 3-7 names, and
// in agreement with unicode/utf8 on sequences of one to four bytes made
// around every boundary of its ranges (a check of the oracle, not of
// panto's code).
func TestRefValidUTF8(t *testing.T) {
	for _, tt := range []struct {
		b    string
		want bool
	}{
		{"", true}, {"a", true}, {"\x7f", true}, {"\x80", false}, {"\xc1\xbf", false}, {"\xc2\x80", true},
		{"\xdf\xbf", true}, {"\xe0\x9f\xbf", false}, {"\xe0\xa0\x80", true}, {"\xed\x9f\xbf", true},
		{"\xed\xa0\x80", false}, {"\xef\xbf\xbf", true}, {"\xf0\x8f\xbf\xbf", false}, {"\xf0\x90\x80\x80", true},
		{"\xf4\x8f\xbf\xbf", true}, {"\xf4\x90\x80\x80", false}, {"\xf5\x80\x80\x80", false}, {"\xe1\x80", false},
		{"\xe1\x80\x7f", false}, {"é日本🙂", true},
	} {
		if got := refValidUTF8([]byte(tt.b)); got != tt.want {
			t.Errorf("refValidUTF8(%q) = %v, want %v", tt.b, got, tt.want)
		}
	}
	// Every lead byte, followed by two bytes from either side of every
	// boundary of the ranges in Table 3-7 (all 2^24 sequences cost 7 s
	// under -race on a busy machine, and say no more: the oracle compares
	// bytes with those boundaries only).
	var near []byte
	for _, c := range []int{0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xef, 0xf0, 0xf4, 0xf5, 0xff} {
		for d := -1; d <= 1; d++ {
			if v := c + d; v >= 0 && v <= 0xff && bytes.IndexByte(near, byte(v)) < 0 {
				near = append(near, byte(v))
			}
		}
	}
	b := make([]byte, 4)
	for lead := range 256 {
		for _, c1 := range near {
			for _, c2 := range near {
				for _, c3 := range append(near[:0:0], 0x80, 0x41) {
					b[0], b[1], b[2], b[3] = byte(lead), c1, c2, c3
					for n := 1; n <= 4; n++ {
						if got, want := refValidUTF8(b[:n]), utf8.Valid(b[:n]); got != want {
							t.Fatalf("refValidUTF8(% x) = %v, unicode/utf8 says %v", b[:n], got, want)
						}
					}
				}
			}
		}
	}
}
