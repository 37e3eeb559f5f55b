//go:build !amd64 || purego

package scan

// prefetch would ask for the cache line of *p; here it does nothing.
func prefetch(p *idSlot) {}
