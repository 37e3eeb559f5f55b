//go:build !amd64

// Package cpuid says what the processor can do, for the assembly of
// rawjson (UTF-8 validation) and search (the prefilter): one copy of the
// CPUID probe.
package cpuid

// AVX2 is false off amd64: there is no assembly there.
const AVX2 = false
