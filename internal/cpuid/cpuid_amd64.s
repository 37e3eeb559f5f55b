#include "textflag.h"

// func hasAVX2() bool: the processor has AVX2 and the system saves the
// YMM registers.
TEXT ·hasAVX2(SB), NOSPLIT, $0-1
	MOVB  $0, ret+0(FP)
	MOVL  $0, AX
	CPUID
	CMPL  AX, $7
	JB    no
	MOVL  $1, AX
	XORL  CX, CX
	CPUID
	MOVL  CX, R8
	ANDL  $0x18000000, R8 // OSXSAVE and AVX
	CMPL  R8, $0x18000000
	JNE   no
	XORL  CX, CX
	XGETBV
	ANDL  $6, AX // the XMM and YMM state
	CMPL  AX, $6
	JNE   no
	MOVL  $7, AX
	XORL  CX, CX
	CPUID
	SHRL  $5, BX
	ANDL  $1, BX
	MOVB  BX, ret+0(FP)

no:
	RET
