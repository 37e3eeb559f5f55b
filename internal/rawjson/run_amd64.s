//go:build !purego

#include "textflag.h"

// Sixteen bytes a turn with SSE2, which every amd64 processor has, or 64
// with AVX2 where the processor has it (haveAVX2).

DATA quotes<>+0(SB)/8, $0x2222222222222222
DATA quotes<>+8(SB)/8, $0x2222222222222222
GLOBL quotes<>(SB), RODATA|NOPTR, $16
DATA backslashes<>+0(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA backslashes<>+8(SB)/8, $0x5c5c5c5c5c5c5c5c
GLOBL backslashes<>(SB), RODATA|NOPTR, $16
DATA controls<>+0(SB)/8, $0x1f1f1f1f1f1f1f1f // the largest control byte
DATA controls<>+8(SB)/8, $0x1f1f1f1f1f1f1f1f
GLOBL controls<>(SB), RODATA|NOPTR, $16

// escLow and escHigh tell, with one VPSHUFB each, the bytes that may
// follow a '\\' in a two-byte escape (" \\ / b f n r t): escHigh maps a
// byte's high nibble to a bit (2, 5, 6, 7 to 1, 2, 4, 8), escLow its low
// nibble to the high nibbles it goes with; a byte is one of them when the
// two share a bit. Each table is repeated for the two lanes of a YMM.
DATA escLow<>+0(SB)/8, $0x00040008000d0000
DATA escLow<>+8(SB)/8, $0x0104000200000000
DATA escLow<>+16(SB)/8, $0x00040008000d0000
DATA escLow<>+24(SB)/8, $0x0104000200000000
GLOBL escLow<>(SB), RODATA|NOPTR, $32
DATA escHigh<>+0(SB)/8, $0x0804020000010000
DATA escHigh<>+8(SB)/8, $0x0000000000000000
DATA escHigh<>+16(SB)/8, $0x0804020000010000
DATA escHigh<>+24(SB)/8, $0x0000000000000000
GLOBL escHigh<>(SB), RODATA|NOPTR, $32
DATA nibbles<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibbles<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL nibbles<>(SB), RODATA|NOPTR, $16

// escapes marks the bytes that may follow a '\\' in a two-byte escape.
DATA escapes<>+0x20(SB)/8, $0x0000000000010000 // '"' (0x22)
DATA escapes<>+0x28(SB)/8, $0x0100000000000000 // '/' (0x2f)
DATA escapes<>+0x58(SB)/8, $0x0000000100000000 // '\\' (0x5c)
DATA escapes<>+0x60(SB)/8, $0x0001000000010000 // 'b' (0x62), 'f' (0x66)
DATA escapes<>+0x68(SB)/8, $0x0001000000000000 // 'n' (0x6e)
DATA escapes<>+0x70(SB)/8, $0x0000000100010000 // 'r' (0x72), 't' (0x74)
GLOBL escapes<>(SB), RODATA|NOPTR, $256

// STEP_ESCAPE: AX marks the bytes of the block at SI (CX bytes left) that
// stop a run. When the first is a '\\' that starts a two-byte escape (the
// next byte is marked in escapes, at R10), step over the escape and go on
// at loop; else go to stop with its index in AX.
#define STEP_ESCAPE(stop, loop) \
	BSFL    AX, AX; \
	LEAQ    1(AX), R9; \
	CMPQ    R9, CX; \
	JAE     stop; \
	CMPB    (SI)(AX*1), $0x5c; \
	JNE     stop; \
	MOVBLZX (SI)(R9*1), DX; \
	CMPB    (R10)(DX*1), $0; \
	JEQ     stop; \
	ADDQ    $2, AX; \
	ADDQ    AX, SI; \
	SUBQ    AX, CX; \
	JMP     loop

// func plainRun(b []byte) int
// Returns the index of the first byte of b that is '"', a control byte
// (< 0x20) or a '\\' that does not start a two-byte escape (\" \\ \/ \b
// \f \n \r \t, which it steps over), or an index where fewer than sixteen
// bytes are left: the caller goes on from there eight bytes and then one
// byte at a time. With AVX2 it looks at 64 bytes a turn, then at blocks
// of sixteen.
TEXT ·plainRun(SB), NOSPLIT, $0-32
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), CX
	MOVQ SI, DI
	LEAQ escapes<>(SB), R10
	CMPB ·haveAVX2(SB), $0
	JEQ  sse
	VPBROADCASTB quotes<>(SB), Y1
	VPBROADCASTB backslashes<>(SB), Y2
	VPBROADCASTB controls<>(SB), Y3
	VPXOR Y8, Y8, Y8
	VBROADCASTI128 nibbles<>(SB), Y9
	VMOVDQU escLow<>(SB), Y10
	VMOVDQU escHigh<>(SB), Y11
	XORL R8, R8 // 1 when the first byte of the block is escaped

// Blocks of 64 bytes, as two halves: the masks of a block are one 64-bit
// word, so the work done on them (which is most of the work where text is
// dense in escapes) is done once for 64 bytes. A block with no backslash
// (and no escape pending) stops at its first quote or control byte. A
// block with backslashes finds which bytes are escaped in a few
// instructions, however many escapes it holds, and stops at the first
// unescaped quote, control byte, or backslash whose escape is not a
// two-byte one (\u, or invalid: the caller looks at it). What is left,
// less than a block, goes to the SSE2 loop.
avxLoop:
	CMPQ CX, $64
	JB   avxDone
	VMOVDQU (SI), Y0
	VMOVDQU 32(SI), Y12
	VPCMPEQB Y1, Y0, Y4   // quotes, first half
	VPCMPEQB Y2, Y0, Y5   // backslashes
	VPMINUB Y3, Y0, Y6
	VPCMPEQB Y0, Y6, Y6   // control bytes
	VPCMPEQB Y1, Y12, Y13 // the same, second half
	VPCMPEQB Y2, Y12, Y14
	VPMINUB Y3, Y12, Y15
	VPCMPEQB Y12, Y15, Y15
	VPOR Y5, Y4, Y7
	VPOR Y6, Y7, Y7
	VPOR Y13, Y7, Y7
	VPOR Y14, Y7, Y7
	VPOR Y15, Y7, Y7
	VPTEST Y7, Y7
	JNZ  avxMarked
	TESTL R8, R8
	JNZ  avxMarked
	ADDQ $64, SI
	SUBQ $64, CX
	JMP  avxLoop

avxMarked:
	VPMOVMSKB Y4, AX // quotes
	VPMOVMSKB Y13, R9
	SHLQ $32, R9
	ORQ  R9, AX
	VPMOVMSKB Y5, BX // backslashes
	VPMOVMSKB Y14, R9
	SHLQ $32, R9
	ORQ  R9, BX
	VPMOVMSKB Y6, DX // control bytes
	VPMOVMSKB Y15, R9
	SHLQ $32, R9
	ORQ  R9, DX
	MOVQ BX, R9
	ORQ  R8, R9
	JNZ  avxEscapes
	ORQ  DX, AX // a quote or a control byte: stop there
	JMP  avxStopAX

// The escaped bytes, as simdjson finds them: a backslash that is not
// itself escaped starts a run; subtracting the run's starts from the odd
// bits carries through each run, and what the carry leaves tells the
// escaped bytes, whatever the runs' lengths and parities.
avxEscapes:
	MOVQ R8, R9
	NOTQ R9
	ANDQ BX, R9          // backslashes that may escape: not escaped themselves
	MOVQ R9, R11
	SHLQ $1, R11
	MOVQ $0xaaaaaaaaaaaaaaaa, R12
	ORQ  R12, R11
	SUBQ R9, R11
	XORQ R12, R11        // escapes, and the bytes that end their runs
	MOVQ BX, R13
	ORQ  R8, R13
	XORQ R11, R13        // escaped bytes
	ANDQ BX, R11
	SHRQ $63, R11        // 1 when the last byte escapes the next block's first
	VPAND Y9, Y0, Y4
	VPSRLW $4, Y0, Y5
	VPAND Y9, Y5, Y5
	VPSHUFB Y4, Y10, Y4
	VPSHUFB Y5, Y11, Y5
	VPAND Y4, Y5, Y4
	VPCMPEQB Y8, Y4, Y4
	VPMOVMSKB Y4, R9     // bytes no two-byte escape ends with
	VPAND Y9, Y12, Y6
	VPSRLW $4, Y12, Y7
	VPAND Y9, Y7, Y7
	VPSHUFB Y6, Y10, Y6
	VPSHUFB Y7, Y11, Y7
	VPAND Y6, Y7, Y6
	VPCMPEQB Y8, Y6, Y6
	VPMOVMSKB Y6, R12
	SHLQ $32, R12
	ORQ  R12, R9
	ANDQ R13, R9         // escaped bytes that make no two-byte escape
	TESTQ $1, R9
	JNZ  avxStopPrev     // its backslash ended the block before
	SHRQ $1, R9          // stop at their backslash
	NOTQ R13
	ANDQ R13, AX         // unescaped quotes
	ORQ  DX, AX
	ORQ  R9, AX
	JNZ  avxStopAX
	MOVQ R11, R8
	ADDQ $64, SI
	SUBQ $64, CX
	JMP  avxLoop

avxStopAX:
	BSFQ AX, AX
	VZEROUPPER
	ADDQ AX, SI
	JMP  plainDone

avxStopPrev:
	VZEROUPPER
	DECQ SI
	JMP  plainDone

avxDone:
	VZEROUPPER
	TESTL R8, R8
	JZ    sse
	// The byte at SI is escaped by the last byte of the block before:
	// step over it when it makes a two-byte escape, else stop at that
	// backslash.
	TESTQ CX, CX
	JZ    prevStop
	MOVBLZX (SI), DX
	CMPB    (R10)(DX*1), $0
	JEQ     prevStop
	INCQ SI
	DECQ CX
	JMP  sse

prevStop:
	DECQ SI
	JMP  plainDone

sse:
	MOVOU quotes<>(SB), X1
	MOVOU backslashes<>(SB), X2
	MOVOU controls<>(SB), X3

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
	STEP_ESCAPE(plainStop, plainLoop)

plainStop:
	ADDQ AX, SI

plainDone:
	SUBQ DI, SI
	MOVQ SI, ret+24(FP)
	RET
