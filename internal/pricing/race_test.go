//go:build race

package pricing

// raceBuild: the tests run under the race detector, which makes decoding
// some 10 times slower; a test that needs a large file to exercise a path
// makes it smaller here, with the thresholds scaled down alike.
const raceBuild = true
