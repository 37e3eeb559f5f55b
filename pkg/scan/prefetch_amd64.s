//go:build !purego

#include "textflag.h"

// func prefetch(p *idSlot)
// Asks for the cache line at p without waiting for it.
TEXT ·prefetch(SB), NOSPLIT, $0-8
	MOVQ p+0(FP), AX
	PREFETCHT0 (AX)
	RET
