//go:build !purego

#include "textflag.h"

// UTF-8 validation sixteen bytes a turn with SSSE3 (PSHUFB table lookups),
// after Keiser and Lemire, "Validating UTF-8 in less than one instruction
// per byte" (2021). Three tables indexed by the nibbles of a byte and of the
// byte before it name the errors each pair could be (one bit each); a pair
// is wrong where all three agree. The third and fourth bytes of a sequence
// are checked apart: they must be continuation bytes.

// The error bits: TOO_SHORT 0x01, TOO_LONG 0x02, OVERLONG_3 0x04,
// TOO_LARGE 0x08, SURROGATE 0x10, OVERLONG_2 0x20, TOO_LARGE_1000 and
// OVERLONG_4 0x40, TWO_CONTS 0x80; CARRY is TOO_SHORT|TOO_LONG|TWO_CONTS.

// By the high nibble of the first byte of a pair.
DATA utf8hi1<>+0(SB)/8, $0x0202020202020202 // 0_______: TOO_LONG
DATA utf8hi1<>+8(SB)/8, $0x4915012180808080 // 10__: TWO_CONTS; 1100: TOO_SHORT|OVERLONG_2; 1101: TOO_SHORT; 1110: TOO_SHORT|OVERLONG_3|SURROGATE; 1111: TOO_SHORT|TOO_LARGE|TOO_LARGE_1000|OVERLONG_4
GLOBL utf8hi1<>(SB), RODATA|NOPTR, $16

// By the low nibble of the first byte.
DATA utf8lo1<>+0(SB)/8, $0xCBCBCB8B8383A3E7 // 0000: CARRY|OVERLONG_3|OVERLONG_2|OVERLONG_4; 0001: CARRY|OVERLONG_2; 001_: CARRY; 0100: CARRY|TOO_LARGE; 0101-0111: CARRY|TOO_LARGE|TOO_LARGE_1000
DATA utf8lo1<>+8(SB)/8, $0xCBCBDBCBCBCBCBCB // 1___: CARRY|TOO_LARGE|TOO_LARGE_1000, and SURROGATE for 1101
GLOBL utf8lo1<>(SB), RODATA|NOPTR, $16

// By the high nibble of the second byte.
DATA utf8hi2<>+0(SB)/8, $0x0101010101010101 // 0_______: TOO_SHORT
DATA utf8hi2<>+8(SB)/8, $0x01010101BABAAEE6 // 1000: TOO_LONG|OVERLONG_2|TWO_CONTS|OVERLONG_3|TOO_LARGE_1000|OVERLONG_4; 1001: TOO_LONG|OVERLONG_2|TWO_CONTS|OVERLONG_3|TOO_LARGE; 101_: TOO_LONG|OVERLONG_2|TWO_CONTS|SURROGATE|TOO_LARGE; 11__: TOO_SHORT
GLOBL utf8hi2<>(SB), RODATA|NOPTR, $16

// A block ends in an unfinished sequence where a byte is above these.
DATA utf8max<>+0(SB)/8, $0xFFFFFFFFFFFFFFFF
DATA utf8max<>+8(SB)/8, $0xBFDFEFFFFFFFFFFF
GLOBL utf8max<>(SB), RODATA|NOPTR, $16

// func validUTF8SSSE3(b []byte) bool
TEXT ·validUTF8SSSE3(SB), NOSPLIT, $16-25
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), CX
	MOVOU utf8hi1<>(SB), X8
	MOVOU utf8lo1<>(SB), X9
	MOVOU utf8hi2<>(SB), X10
	MOVOU utf8max<>(SB), X15
	MOVQ $0x0f0f0f0f0f0f0f0f, AX
	MOVQ AX, X11
	PSHUFD $0, X11, X11
	MOVQ $0x6060606060606060, AX // 0xE0-0x80: a third byte's lead leaves >= 0x80
	MOVQ AX, X12
	PSHUFD $0, X12, X12
	MOVQ $0x7070707070707070, AX // 0xF0-0x80: a fourth byte's lead leaves >= 0x80
	MOVQ AX, X13
	PSHUFD $0, X13, X13
	MOVQ $0x8080808080808080, AX
	MOVQ AX, X14
	PSHUFD $0, X14, X14
	PXOR X1, X1 // the block before
	PXOR X2, X2 // errors
	PXOR X3, X3 // the block before ends in an unfinished sequence
	XORQ R8, R8 // the tail is done

loop:
	CMPQ CX, $16
	JB   tail
	MOVOU (SI), X0
	PMOVMSKB X0, AX
	TESTL AX, AX
	JNZ  mixed
	POR  X3, X2 // ASCII: nothing may be unfinished before it
	PXOR X3, X3
	MOVO X0, X1
	JMP  next

mixed:
	MOVO    X0, X4
	PALIGNR $15, X1, X4 // the byte before each byte
	MOVO    X4, X5
	PSRLW   $4, X5
	PAND    X11, X5
	MOVO    X8, X6
	PSHUFB  X5, X6
	PAND    X11, X4
	MOVO    X9, X7
	PSHUFB  X4, X7
	PAND    X7, X6
	MOVO    X0, X5
	PSRLW   $4, X5
	PAND    X11, X5
	MOVO    X10, X7
	PSHUFB  X5, X7
	PAND    X7, X6 // the errors of each pair
	MOVO    X0, X4
	PALIGNR $14, X1, X4 // two bytes before
	PSUBUSB X12, X4
	MOVO    X0, X5
	PALIGNR $13, X1, X5 // three bytes before
	PSUBUSB X13, X5
	POR     X5, X4
	PAND    X14, X4 // must be a third or fourth byte
	PXOR    X6, X4  // which only a continuation after a continuation (TWO_CONTS) is
	POR     X4, X2
	MOVO    X0, X3
	PSUBUSB X15, X3
	MOVO    X0, X1

next:
	ADDQ $16, SI
	SUBQ $16, CX
	JMP  loop

tail: // the last bytes, padded with NULs (ASCII) to a block
	TESTQ R8, R8
	JNZ   done
	MOVQ  $1, R8
	TESTQ CX, CX
	JZ    done
	PXOR  X0, X0
	MOVOU X0, buf-16(SP)
	LEAQ  buf-16(SP), DI
	MOVQ  CX, DX

copy:
	MOVB (SI), AX
	MOVB AX, (DI)
	INCQ SI
	INCQ DI
	DECQ DX
	JNZ  copy
	LEAQ buf-16(SP), SI
	MOVQ $16, CX
	JMP  loop

done:
	POR      X3, X2 // nothing may be unfinished at the end
	PXOR     X4, X4
	PCMPEQB  X4, X2
	PMOVMSKB X2, AX
	CMPL     AX, $0xffff
	SETEQ    ret+24(FP)
	RET

// func hasSSSE3() bool
TEXT ·hasSSSE3(SB), NOSPLIT, $0-1
	MOVL  $1, AX
	XORL  CX, CX
	CPUID
	SHRL  $9, CX
	ANDL  $1, CX
	MOVB  CX, ret+0(FP)
	RET
