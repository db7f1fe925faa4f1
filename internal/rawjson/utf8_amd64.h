// UTF8 (verbatim_amd64.s) is simdjson's UTF-8 validation (the lookup
// algorithm of Keiser and Lemire, "Validating UTF-8 in less than one
// instruction per byte", 2021) of the 32 bytes in the vector in, the 32
// before them in prev: it ORs into Y14 a byte not 0 for each error in the
// runes that end in in or start in prev and go on into it. It looks up
// each byte's predecessor by its high and low nibble and the byte by its
// high nibble, ANDs the three, and checks that the third and fourth bytes
// of runes are where they must be. A rune that in cuts short is no error
// here: the next block's UTF8 sees it, or the byte walk reads it from its
// start (runeStart). It clobbers prev, Y11, Y12 and Y15.
#define UTF8(in, prev) \
	VPERM2I128 $0x21, in, prev, Y11 \
	VPALIGNR $14, Y11, in, Y12 \
	VPBROADCASTB utf8Bytes<>+0(SB), prev \
	VPSUBUSB prev, Y12, Y12 \
	VPALIGNR $13, Y11, in, Y15 \
	VPBROADCASTB utf8Bytes<>+1(SB), prev \
	VPSUBUSB prev, Y15, Y15 \
	VPOR Y15, Y12, Y12 \
	VPBROADCASTB utf8Bytes<>+2(SB), prev \
	VPAND prev, Y12, Y12 \
	VPALIGNR $15, Y11, in, Y11 \
	VPSRLW $4, Y11, Y15 \
	VPAND utf8Nibble<>(SB), Y15, Y15 \
	VBROADCASTI128 utf8Lead1<>(SB), prev \
	VPSHUFB Y15, prev, prev \
	VPAND utf8Nibble<>(SB), Y11, Y11 \
	VBROADCASTI128 utf8Low1<>(SB), Y15 \
	VPSHUFB Y11, Y15, Y15 \
	VPAND Y15, prev, prev \
	VPSRLW $4, in, Y11 \
	VPAND utf8Nibble<>(SB), Y11, Y11 \
	VBROADCASTI128 utf8Next<>(SB), Y15 \
	VPSHUFB Y11, Y15, Y15 \
	VPAND Y15, prev, prev \
	VPXOR prev, Y12, Y12 \
	VPOR Y12, Y14, Y14

// The lookups, 16 bytes each (broadcast to the lanes of a vector); their
// bits are the errors: 0x01 too short (a lead byte, then no continuation),
// 0x02 too long (ASCII, then a continuation), 0x04 overlong of 3 bytes,
// 0x08 past U+10FFFF, 0x10 a surrogate, 0x20 overlong of 2 bytes, 0x40
// overlong of 4 bytes or past U+10FFFF, 0x80 two continuations: by the
// high nibble of the byte before (utf8Lead1), by its low nibble
// (utf8Low1), by the high nibble of the byte (utf8Next).
DATA  utf8Lead1<>+0(SB)/8, $0x0202020202020202
DATA  utf8Lead1<>+8(SB)/8, $0x4915012180808080
GLOBL utf8Lead1<>(SB), RODATA|NOPTR, $16
DATA  utf8Low1<>+0(SB)/8, $0xcbcbcb8b8383a3e7
DATA  utf8Low1<>+8(SB)/8, $0xcbcbdbcbcbcbcbcb
GLOBL utf8Low1<>(SB), RODATA|NOPTR, $16
DATA  utf8Next<>+0(SB)/8, $0x0101010101010101
DATA  utf8Next<>+8(SB)/8, $0x01010101babaaee6
GLOBL utf8Next<>(SB), RODATA|NOPTR, $16

// utf8Bytes: what a lead of 3 (0xe0) or 4 (0xf0) bytes less them keeps a
// top bit of (0x60, 0x70); the top bit.
DATA  utf8Bytes<>+0(SB)/1, $0x60
DATA  utf8Bytes<>+1(SB)/1, $0x70
DATA  utf8Bytes<>+2(SB)/1, $0x80
GLOBL utf8Bytes<>(SB), RODATA|NOPTR, $4

// utf8Nibble is the low nibble of each byte.
DATA  utf8Nibble<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA  utf8Nibble<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA  utf8Nibble<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA  utf8Nibble<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL utf8Nibble<>(SB), RODATA|NOPTR, $32
