//go:build amd64 && !purego

#include "textflag.h"
#include "escape_amd64.h"

// The bytes the scan looks for, each broadcast to a vector: '"', '\\',
// 0x20 (which ORed in makes '[' of '{' and ']' of '}'), '{', '}'.
DATA  blockBytes<>+0(SB)/1, $0x22
DATA  blockBytes<>+1(SB)/1, $0x5C
DATA  blockBytes<>+2(SB)/1, $0x20
DATA  blockBytes<>+3(SB)/1, $0x7B
DATA  blockBytes<>+4(SB)/1, $0x7D
GLOBL blockBytes<>(SB), RODATA|NOPTR, $8

// func scanBlocks(p *byte, n int, st *blockState) int
//
// Registers: SI p, CX n, DI st, AX the block's offset, R8 depth, R9 the
// in-string carry (0 or all ones), R10 the escape carry (0 or 1), R15 the
// odd bits, X10 all ones; per block BX quotes, R12 backslashes, R13 opening and R14
// closing brackets.
TEXT ·scanBlocks(SB), NOSPLIT, $0-32
	VPBROADCASTB blockBytes<>+0(SB), Y0
	VPBROADCASTB blockBytes<>+1(SB), Y1
	VPBROADCASTB blockBytes<>+2(SB), Y2
	VPBROADCASTB blockBytes<>+3(SB), Y3
	VPBROADCASTB blockBytes<>+4(SB), Y4
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ st+16(FP), DI
	MOVQ 0(DI), R8
	MOVQ 8(DI), R9
	MOVQ 16(DI), R10
	XORQ AX, AX
	MOVQ $0xAAAAAAAAAAAAAAAA, R15
	MOVQ $-1, DX
	VMOVQ DX, X10

loop:
	LEAQ 64(AX), DX
	CMPQ DX, CX
	JA   out

	VMOVDQU (SI)(AX*1), Y5
	VMOVDQU 32(SI)(AX*1), Y6
	MASK(Y0, Y5, Y6, Y7, Y8, BX)  // quotes
	MASK(Y1, Y5, Y6, Y7, Y8, R12) // backslashes
	VPOR Y2, Y5, Y5
	VPOR Y2, Y6, Y6
	MASK(Y3, Y5, Y6, Y7, Y8, R13) // '{' and '['
	MASK(Y4, Y5, Y6, Y7, Y8, R14) // '}' and ']'

	ESCAPED // R11 the escaped bytes, R10 the next block's carry
	NOTQ R11
	ANDQ R11, BX    // the quotes not escaped

	// Inside strings: the parity of the quotes up to each byte (their
	// carry-less product with all ones).
	VMOVQ BX, X9
	VPCLMULQDQ $0, X10, X9, X9
	VMOVQ X9, BX
	XORQ R9, BX     // in a string: from its opening quote to before its closing one
	MOVQ BX, R9
	SARQ $63, R9

	NOTQ BX         // outside strings
	ANDQ BX, R12
	JNZ  odd
	ANDQ BX, R13
	ANDQ BX, R14

	POPCNTQ R14, DX
	CMPQ DX, R8
	JAE  walk       // as many closing brackets as are open: does it end here?
	POPCNTQ R13, R11
	ADDQ R11, R8
	SUBQ DX, R8
	ADDQ $64, AX
	JMP  loop

walk:
	MOVQ R13, BX
	ORQ  R14, BX
walkbit:
	TESTQ BX, BX
	JZ    walked
	BSFQ  BX, DX
	BTQ   DX, R13
	JCS   opening
	DECQ  R8
	JZ    end
	JMP   nextbit
opening:
	INCQ R8
nextbit:
	LEAQ -1(BX), R11
	ANDQ R11, BX
	JMP  walkbit
walked:
	ADDQ $64, AX
	JMP  loop

end:
	LEAQ 1(AX)(DX*1), AX
	MOVQ $1, 24(DI)
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET

odd:
	MOVQ $2, 24(DI)
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET

out:
	MOVQ R8, 0(DI)
	MOVQ R9, 8(DI)
	MOVQ R10, 16(DI)
	MOVQ $0, 24(DI)
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET

