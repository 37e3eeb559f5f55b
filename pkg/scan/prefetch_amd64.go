//go:build !purego

package scan

// prefetch asks for the cache line of *p without waiting for it (in
// prefetch_amd64.s).
//
//go:noescape
func prefetch(p *idSlot)
