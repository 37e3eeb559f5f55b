// Package cpuid says what the processor can do, for the assembly of
// rawjson (UTF-8 validation) and search (the prefilter): one copy of the
// CPUID probe.
package cpuid

// AVX2 says whether the processor has AVX2 and the system saves the YMM
// registers.
var AVX2 = hasAVX2()

func hasAVX2() bool
