//go:build race

package fsckcmd

// raceBuild: the tests run under the race detector, which makes reading
// 5 to 20 times slower; a test that measures memory on a hundred megabytes
// runs its full size in the plain build (scripts/test runs it) and a
// smaller one here, through the same code.
const raceBuild = true
