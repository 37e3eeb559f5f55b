//go:build !purego

package rawjson

// plainRun returns the length of the run of string bytes that starts b and
// needs no closer look: plain bytes (not '"', '\\' or a control byte) and
// the two-byte escapes (\" \\ \/ \b \f \n \r \t). It may stop short of
// the run's end where fewer than sixteen bytes are left: the caller checks
// the bytes from there on. In run_amd64.s.
//
//go:noescape
func plainRun(b []byte) int
