//go:build !purego

package session

// plainRun returns the length of the run of plain string bytes (not '"',
// '\\' or a control byte) that starts b, counted in whole sixteen-byte
// blocks: the caller checks the bytes from there on. In run_amd64.s.
//
//go:noescape
func plainRun(b []byte) int

// prefetch asks for the cache line of *p without waiting for it.
//
//go:noescape
func prefetch(p *idSlot)
