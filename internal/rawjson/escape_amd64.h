// Macros the AVX2 scans (blocks_amd64.s, verbatim_amd64.s) share.

// MASK sets r to the 64-bit mask of the block's bytes (the vectors lo and
// hi, 32 bytes each) equal to those of vec; t1 and t2 are scratch vectors
// and DX a scratch register.
#define MASK(vec, lo, hi, t1, t2, r) \
	VPCMPEQB vec, lo, t1 \
	VPMOVMSKB t1, r \
	VPCMPEQB vec, hi, t2 \
	VPMOVMSKB t2, DX \
	SHLQ $32, DX \
	ORQ DX, r

// ESCAPED is simdjson's escape scanner: a backslash escapes the next byte
// unless it is escaped itself. From the block's backslashes in R12, the
// escape carry in R10 (1: the block's first byte is escaped) and the odd
// bits in R15, it sets R11 to the escaped bytes and R10 to the next
// block's carry; DX is scratch.
#define ESCAPED \
	MOVQ R12, R11 \
	ORQ R10, R11 \
	MOVQ R10, DX \
	NOTQ DX \
	ANDQ R12, DX \
	MOVQ DX, R10 \
	SHLQ $1, R10 \
	ORQ R15, R10 \
	SUBQ DX, R10 \
	XORQ R15, R10 \
	XORQ R10, R11 \
	ANDQ R12, R10 \
	SHRQ $63, R10
