//go:build race

package memtest

// Race says the tests run under the race detector.
const Race = true
