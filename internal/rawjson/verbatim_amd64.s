//go:build amd64 && !purego

#include "textflag.h"
#include "escape_amd64.h"
#include "utf8_amd64.h"

// The bytes the scan compares with, each broadcast to a vector: '"', '\\',
// 0x1f (the largest control character), and the other bytes a backslash
// may escape on its own: '/', 'b', 'f', 'n', 'r', 't'.
DATA  verbatimBytes<>+0(SB)/1, $0x22
DATA  verbatimBytes<>+1(SB)/1, $0x5C
DATA  verbatimBytes<>+2(SB)/1, $0x1F
DATA  verbatimBytes<>+3(SB)/1, $0x2F
DATA  verbatimBytes<>+4(SB)/1, $0x62
DATA  verbatimBytes<>+5(SB)/1, $0x66
DATA  verbatimBytes<>+6(SB)/1, $0x6E
DATA  verbatimBytes<>+7(SB)/1, $0x72
DATA  verbatimBytes<>+8(SB)/1, $0x74
GLOBL verbatimBytes<>(SB), RODATA|NOPTR, $16

// ERRORS sets st.bad to 1 if UTF8 found an error (it stays 1 from an
// earlier call).
#define ERRORS \
	VPTEST Y14, Y14 \
	SETNE  DL \
	MOVBQZX DL, DX \
	ORQ    DX, 16(DI)

// func scanVerbatim(p *byte, n int, st *verbatimState) int
//
// Registers: SI p, CX n, DI st, AX the block's offset, R10 the escape
// carry (0 or 1) and R9 the block's, R15 the odd bits; per block BX
// quotes, R12 backslashes, R13 what the byte walk must judge (control
// characters, escapes of other bytes), R14 the bytes a backslash may
// escape on its own, R8 the top bits of its bytes and the 32 before.
// Y13 is the last 32 bytes walked (0 before the first), Y14 the UTF-8
// errors found (UTF8).
TEXT ·scanVerbatim(SB), NOSPLIT, $0-32
	VPBROADCASTB verbatimBytes<>+0(SB), Y0
	VPBROADCASTB verbatimBytes<>+1(SB), Y1
	VPBROADCASTB verbatimBytes<>+2(SB), Y2
	VPBROADCASTB verbatimBytes<>+3(SB), Y3
	VPBROADCASTB verbatimBytes<>+4(SB), Y4
	VPBROADCASTB verbatimBytes<>+5(SB), Y5
	VPBROADCASTB verbatimBytes<>+6(SB), Y6
	VPBROADCASTB verbatimBytes<>+7(SB), Y7
	VPBROADCASTB verbatimBytes<>+8(SB), Y8
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ st+16(FP), DI
	MOVQ 0(DI), R10
	VPXOR Y13, Y13, Y13
	VPXOR Y14, Y14, Y14
	XORQ AX, AX
	MOVQ $0xAAAAAAAAAAAAAAAA, R15

loop:
	LEAQ 64(AX), DX
	CMPQ DX, CX
	JA   out

	MOVQ R10, R9    // the carry the block starts with
	VMOVDQU (SI)(AX*1), Y9
	VMOVDQU 32(SI)(AX*1), Y10
	MASK(Y0, Y9, Y10, Y11, Y12, BX)  // quotes
	MASK(Y1, Y9, Y10, Y11, Y12, R12) // backslashes

	// Bytes of multi-byte runes (their top bit) in the block or the 32
	// bytes before, for UTF8 below.
	VPOR      Y9, Y10, Y11
	VPOR      Y13, Y11, Y11
	VPMOVMSKB Y11, R8

	// Control characters: the bytes no larger than 0x1f.
	VPMINUB Y2, Y9, Y11
	VPCMPEQB Y11, Y9, Y11
	VPMOVMSKB Y11, R14
	VPMINUB Y2, Y10, Y12
	VPCMPEQB Y12, Y10, Y12
	VPMOVMSKB Y12, DX
	SHLQ $32, DX
	ORQ  DX, R14
	MOVQ R14, R13

	// The bytes a backslash may escape on its own ('u' is left to the
	// byte walk).
	VPCMPEQB Y0, Y9, Y11
	VPCMPEQB Y1, Y9, Y12
	VPOR     Y12, Y11, Y11
	VPCMPEQB Y3, Y9, Y12
	VPOR     Y12, Y11, Y11
	VPCMPEQB Y4, Y9, Y12
	VPOR     Y12, Y11, Y11
	VPCMPEQB Y5, Y9, Y12
	VPOR     Y12, Y11, Y11
	VPCMPEQB Y6, Y9, Y12
	VPOR     Y12, Y11, Y11
	VPCMPEQB Y7, Y9, Y12
	VPOR     Y12, Y11, Y11
	VPCMPEQB Y8, Y9, Y12
	VPOR     Y12, Y11, Y11
	VPMOVMSKB Y11, R14
	VPCMPEQB Y0, Y10, Y11
	VPCMPEQB Y1, Y10, Y12
	VPOR     Y12, Y11, Y11
	VPCMPEQB Y3, Y10, Y12
	VPOR     Y12, Y11, Y11
	VPCMPEQB Y4, Y10, Y12
	VPOR     Y12, Y11, Y11
	VPCMPEQB Y5, Y10, Y12
	VPOR     Y12, Y11, Y11
	VPCMPEQB Y6, Y10, Y12
	VPOR     Y12, Y11, Y11
	VPCMPEQB Y7, Y10, Y12
	VPOR     Y12, Y11, Y11
	VPCMPEQB Y8, Y10, Y12
	VPOR     Y12, Y11, Y11
	VPMOVMSKB Y11, DX
	SHLQ $32, DX
	ORQ  DX, R14

	// The block's runes, unless it and the bytes before are ASCII.
	TESTQ R8, R8
	JZ    ascii
	UTF8(Y9, Y13)
	UTF8(Y10, Y9)

ascii:
	VMOVDQU Y10, Y13
	ESCAPED // R11 the escaped bytes, R10 the next block's carry

	NOTQ R14
	ANDQ R11, R14   // escaped bytes a backslash may not escape on its own
	ORQ  R14, R13   // what the byte walk must judge
	NOTQ R11
	ANDQ R11, BX    // the quotes not escaped
	JZ   noquote

	// The string ends at the first: verbatim so far?
	LEAQ -1(BX), DX
	XORQ BX, DX     // the bytes up to the quote
	TESTQ DX, R13
	JNZ  slow
	BSFQ BX, DX
	LEAQ 1(AX)(DX*1), AX
	MOVQ $1, 8(DI)
	JMP  done

noquote:
	TESTQ R13, R13
	JNZ  slow
	ADDQ $64, AX
	JMP  loop

slow:
	MOVQ R9, 0(DI)
	MOVQ $2, 8(DI)
	JMP  done

out:
	MOVQ R10, 0(DI)
	MOVQ $0, 8(DI)

done: // the state is stored: the errors, and where the scan stopped
	ERRORS
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET
