//go:build !purego

#include "textflag.h"

// UTF-8 validation 32 bytes a turn with AVX2 (VPSHUFB table lookups), after
// Keiser and Lemire, "Validating UTF-8 in less than one instruction per
// byte" (2021). Three tables indexed by the nibbles of a byte and of the
// byte before it name the errors each pair could be (one bit each); a pair
// is wrong where all three agree. The third and fourth bytes of a sequence
// are checked apart: they must be continuation bytes. VPSHUFB looks up
// within each 16-byte lane, so each table is there twice.

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
DATA utf8max<>+8(SB)/8, $0xFFFFFFFFFFFFFFFF
DATA utf8max<>+16(SB)/8, $0xFFFFFFFFFFFFFFFF
DATA utf8max<>+24(SB)/8, $0xBFDFEFFFFFFFFFFF
GLOBL utf8max<>(SB), RODATA|NOPTR, $32

// func validUTF8AVX2(b []byte) bool
TEXT ·validUTF8AVX2(SB), NOSPLIT, $32-25
	MOVQ           b_base+0(FP), SI
	MOVQ           b_len+8(FP), CX
	VBROADCASTI128 utf8hi1<>(SB), Y8
	VBROADCASTI128 utf8lo1<>(SB), Y9
	VBROADCASTI128 utf8hi2<>(SB), Y10
	VMOVDQU        utf8max<>(SB), Y15
	MOVQ           $0x0f0f0f0f0f0f0f0f, AX
	MOVQ           AX, X11
	VPBROADCASTQ   X11, Y11
	MOVQ           $0x6060606060606060, AX // 0xE0-0x80: a third byte's lead leaves >= 0x80
	MOVQ           AX, X12
	VPBROADCASTQ   X12, Y12
	MOVQ           $0x7070707070707070, AX // 0xF0-0x80: a fourth byte's lead leaves >= 0x80
	MOVQ           AX, X13
	VPBROADCASTQ   X13, Y13
	MOVQ           $0x8080808080808080, AX
	MOVQ           AX, X14
	VPBROADCASTQ   X14, Y14
	VPXOR          Y1, Y1, Y1 // the block before
	VPXOR          Y2, Y2, Y2 // errors
	VPXOR          Y3, Y3, Y3 // the block before ends in an unfinished sequence
	XORQ           R8, R8     // the tail is done

// Every block takes the same path: a branch to skip ASCII blocks is
// mispredicted so often on text that mixes ASCII and other letters that it
// doubled the cost of validation there.
loop:
	CMPQ       CX, $32
	JB         tail
	VMOVDQU    (SI), Y0
	VPERM2I128 $0x21, Y0, Y1, Y7 // the last lane before, the first lane
	VPALIGNR   $15, Y7, Y0, Y4   // the byte before each byte
	VPSRLW     $4, Y4, Y5
	VPAND      Y11, Y5, Y5
	VPSHUFB    Y5, Y8, Y6
	VPAND      Y11, Y4, Y4
	VPSHUFB    Y4, Y9, Y4
	VPAND      Y4, Y6, Y6
	VPSRLW     $4, Y0, Y5
	VPAND      Y11, Y5, Y5
	VPSHUFB    Y5, Y10, Y5
	VPAND      Y5, Y6, Y6        // the errors of each pair
	VPALIGNR   $14, Y7, Y0, Y4   // two bytes before
	VPSUBUSB   Y12, Y4, Y4
	VPALIGNR   $13, Y7, Y0, Y5   // three bytes before
	VPSUBUSB   Y13, Y5, Y5
	VPOR       Y5, Y4, Y4
	VPAND      Y14, Y4, Y4       // must be a third or fourth byte
	VPXOR      Y6, Y4, Y4        // which only a continuation after a continuation (TWO_CONTS) is
	VPOR       Y4, Y2, Y2
	VPSUBUSB   Y15, Y0, Y3 // only the last block's counts: the next block's pairs check the others
	VMOVDQA    Y0, Y1
	ADDQ       $32, SI
	SUBQ       $32, CX
	JMP        loop

tail: // the last bytes, padded with NULs (ASCII) to a block
	TESTQ   R8, R8
	JNZ     done
	MOVQ    $1, R8
	TESTQ   CX, CX
	JZ      done
	VPXOR   Y0, Y0, Y0
	VMOVDQU Y0, buf-32(SP)
	LEAQ    buf-32(SP), DI
	MOVQ    CX, DX

copy:
	MOVB (SI), AX
	MOVB AX, (DI)
	INCQ SI
	INCQ DI
	DECQ DX
	JNZ  copy
	LEAQ buf-32(SP), SI
	MOVQ $32, CX
	JMP  loop

done:
	VPOR    Y3, Y2, Y2 // nothing may be unfinished at the end
	VPTEST  Y2, Y2
	SETEQ   ret+24(FP)
	VZEROUPPER
	RET
