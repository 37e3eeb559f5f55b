package search

import (
	"math/rand/v2"
	"testing"
)

// naivePair is indexPair one place at a time.
func naivePair(b []byte, d int, c1, c2, m1, m2 byte) int {
	for i := 0; i+d < len(b); i++ {
		if b[i]|m1 == c1 && b[i+d]|m2 == c2 {
			return i
		}
	}
	return -1
}

// TestIndexPair: the block code (SSE2, AVX2, or a word at a time) finds
// the first place a pair is at, in every position of a block and across
// blocks, a case-folding mask too, as looking one place at a time does.
func TestIndexPair(t *testing.T) {
	eachCPU(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		alpha := []byte("abAB gG\"\\\n")
		for range 20000 {
			n := r.IntN(150)
			b := make([]byte, n)
			for i := range b {
				b[i] = alpha[r.IntN(len(alpha))]
			}
			d := r.IntN(8)
			c1, c2 := alpha[r.IntN(len(alpha))], alpha[r.IntN(len(alpha))]
			var m1, m2 byte
			if r.IntN(2) == 0 && isLetter(c1) {
				c1, m1 = c1|0x20, 0x20
			}
			if r.IntN(2) == 0 && isLetter(c2) {
				c2, m2 = c2|0x20, 0x20
			}
			// slices that start anywhere in memory and end at a page's
			// end are read only where they are
			off := r.IntN(3)
			s := b[min(off, len(b)):]
			if got, want := indexPair(s, d, c1, c2, m1, m2), naivePair(s, d, c1, c2, m1, m2); got != want {
				t.Fatalf("indexPair(%q, %d, %q, %q, %#x, %#x) = %d, want %d", s, d, c1, c2, m1, m2, got, want)
			}
		}
	})
}

// TestIndexPairFolds: a mask of 0x20 on a lower-case letter finds both
// its cases and no other byte.
func TestIndexPairFolds(t *testing.T) {
	eachCPU(t, func(t *testing.T) {
		for c := 0; c < 256; c++ {
			b := make([]byte, 40)
			b[33] = byte(c)
			got := indexPair(b, 0, 'k', 'k', 0x20, 0x20)
			want := -1
			if c == 'k' || c == 'K' {
				want = 33
			}
			if got != want {
				t.Fatalf("byte %#x: %d, want %d", c, got, want)
			}
		}
	})
}

func BenchmarkIndexPair(b *testing.B) {
	buf := make([]byte, 1<<20)
	text := "the quick brown fox jumps over the lazy dog {\"type\":\"text\"}\n"
	for i := range buf {
		buf[i] = text[i%len(text)]
	}
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		if indexPair(buf, 3, 'g', 'c', 0, 0) >= 0 {
			b.Fatal("found")
		}
	}
}
