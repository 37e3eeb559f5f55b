//go:build !amd64 || purego

package rawjson

import "testing"

// eachCPU runs f: there is one code path here.
func eachCPU(t *testing.T, f func(t *testing.T)) { f(t) }

// skipsEscapes: plainRun in Go stops at every backslash.
const skipsEscapes = false

// simdUTF8 says whether ValidUTF8 runs the AVX2 code: never here.
func simdUTF8() bool { return false }
