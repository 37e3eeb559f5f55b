// Package rawjson reads and writes JSON text without decoding it: one-pass
// validation that can walk as it validates (Object, Array, Value), a
// walker for text already known to be valid (Members, Elements, Str,
// Int), UTF-8 validation, and string encoding. Session lines are mostly
// long strings, so string bodies are scanned 64 bytes a turn with AVX2 (16
// with SSE2) on amd64 (run_amd64.s, utf8_amd64.s), with portable Go twins
// elsewhere and with -tags purego; short strings are found in Go, a word
// at a time.
//
// The session format (package session) and the provider streams (package
// provider) both read JSON through it; neither depends on the other.
package rawjson
