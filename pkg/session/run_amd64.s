//go:build !purego

#include "textflag.h"

// Sixteen bytes a turn with SSE2, which every amd64 processor has.

// func plainRun(b []byte) int
// Returns the index of the first byte of b that is '"', '\\' or a control
// byte (< 0x20), or the index where fewer than sixteen bytes are left: the
// caller goes on from there eight bytes and then one byte at a time.
TEXT ·plainRun(SB), NOSPLIT, $0-32
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), CX
	MOVQ SI, DI
	MOVQ $0x2222222222222222, AX
	MOVQ AX, X1
	PSHUFD $0, X1, X1
	MOVQ $0x5c5c5c5c5c5c5c5c, AX
	MOVQ AX, X2
	PSHUFD $0, X2, X2
	MOVQ $0x1f1f1f1f1f1f1f1f, AX
	MOVQ AX, X3
	PSHUFD $0, X3, X3

plainLoop:
	CMPQ CX, $16
	JB   plainDone
	MOVOU (SI), X0
	MOVO X0, X4
	PCMPEQB X1, X4
	MOVO X0, X5
	PCMPEQB X2, X5
	MOVO X0, X6
	PMINUB X3, X6
	PCMPEQB X0, X6
	POR X5, X4
	POR X6, X4
	PMOVMSKB X4, AX
	TESTL AX, AX
	JNZ plainFound
	ADDQ $16, SI
	SUBQ $16, CX
	JMP plainLoop

plainFound:
	BSFL AX, AX
	ADDQ AX, SI

plainDone:
	SUBQ DI, SI
	MOVQ SI, ret+24(FP)
	RET

// func prefetch(p *idSlot)
// Asks for the cache line at p without waiting for it.
TEXT ·prefetch(SB), NOSPLIT, $0-8
	MOVQ p+0(FP), AX
	PREFETCHT0 (AX)
	RET
