//go:build !purego

package rawjson

import "testing"

// eachCPU runs f with the AVX2 code, where the processor has AVX2, and
// again as on a processor without it.
func eachCPU(t *testing.T, f func(t *testing.T)) {
	has := haveAVX2
	defer func() { haveAVX2 = has }()
	if has {
		t.Run("avx2", f)
	}
	haveAVX2 = false
	t.Run("noavx2", f)
}

// skipsEscapes: the assembly plainRun steps over two-byte escapes.
const skipsEscapes = true

// simdUTF8 says whether ValidUTF8 runs the AVX2 code now.
func simdUTF8() bool { return haveAVX2 }
