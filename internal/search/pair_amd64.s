//go:build !purego

#include "textflag.h"

// func pairBlocks(b []byte, d int, c1, c2, m1, m2 byte) int
// Places i from 0 while sixteen (32 with AVX2) are left before len(b)-d:
// the bytes at i and i+d, each ORed with its mask, compared with c1 and c2
// for a block of places at once; the first place where both are equal is
// returned, else the first place not looked at.
TEXT ·pairBlocks(SB), NOSPLIT, $0-48
	MOVQ    b_base+0(FP), SI
	MOVQ    b_len+8(FP), CX
	MOVQ    d+24(FP), DX
	SUBQ    DX, CX            // places: len(b)-d
	XORQ    AX, AX
	LEAQ    (SI)(DX*1), DI    // the second byte of each place
	MOVQ    $0x0101010101010101, R8
	MOVBQZX c1+32(FP), R9
	IMULQ   R8, R9
	MOVQ    R9, X1
	PUNPCKLQDQ X1, X1
	MOVBQZX c2+33(FP), R9
	IMULQ   R8, R9
	MOVQ    R9, X2
	PUNPCKLQDQ X2, X2
	MOVBQZX m1+34(FP), R9
	IMULQ   R8, R9
	MOVQ    R9, X3
	PUNPCKLQDQ X3, X3
	MOVBQZX m2+35(FP), R9
	IMULQ   R8, R9
	MOVQ    R9, X4
	PUNPCKLQDQ X4, X4
	CMPB    ·haveAVX2(SB), $0
	JEQ     sse
	VPBROADCASTB X1, Y1
	VPBROADCASTB X2, Y2
	VPBROADCASTB X3, Y3
	VPBROADCASTB X4, Y4

avx:
	LEAQ      32(AX), R10
	CMPQ      R10, CX
	JGT       avxDone
	VMOVDQU   (SI)(AX*1), Y5
	VMOVDQU   (DI)(AX*1), Y6
	VPOR      Y3, Y5, Y5
	VPOR      Y4, Y6, Y6
	VPCMPEQB  Y1, Y5, Y5
	VPCMPEQB  Y2, Y6, Y6
	VPAND     Y5, Y6, Y5
	VPMOVMSKB Y5, R11
	TESTL     R11, R11
	JNZ       avxFound
	MOVQ      R10, AX
	JMP       avx

avxFound:
	VZEROUPPER
	BSFL R11, R11
	ADDQ R11, AX
	MOVQ AX, ret+40(FP)
	RET

avxDone:
	VZEROUPPER

sse:
	LEAQ     16(AX), R10
	CMPQ     R10, CX
	JGT      done
	MOVOU    (SI)(AX*1), X5
	MOVOU    (DI)(AX*1), X6
	POR      X3, X5
	POR      X4, X6
	PCMPEQB  X1, X5
	PCMPEQB  X2, X6
	PAND     X6, X5
	PMOVMSKB X5, R11
	TESTL    R11, R11
	JNZ      found
	MOVQ     R10, AX
	JMP      sse

found:
	BSFL R11, R11
	ADDQ R11, AX

done:
	MOVQ AX, ret+40(FP)
	RET
