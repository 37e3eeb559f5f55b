//go:build !amd64 || purego

package session

import "encoding/binary"

// plainRun returns the length of the run of plain string bytes (not '"',
// '\\' or a control byte) that starts b, counted in whole eight-byte words
// here (sixteen-byte blocks on amd64): the caller checks the bytes from
// there on.
func plainRun(b []byte) int {
	i := 0
	for i+8 <= len(b) && !special(binary.LittleEndian.Uint64(b[i:])) {
		i += 8
	}
	return i
}

// prefetch would ask for the cache line of *p; here it does nothing.
func prefetch(p *idSlot) {}
