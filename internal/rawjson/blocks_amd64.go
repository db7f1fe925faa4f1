//go:build amd64 && !purego

package rawjson

import "golang.org/x/sys/cpu"

// haveBlocks reports whether scanBlocks runs here (AVX2, POPCNT and PCLMULQDQ).
var haveBlocks = cpu.X86.HasAVX2 && cpu.X86.HasPOPCNT && cpu.X86.HasPCLMULQDQ

// scanBlocks walks the whole 64-byte blocks of the n bytes at p, from the
// state st holds (its zero value: p is the value's first byte), and
// leaves in st where it stopped. It returns the length of the blocks
// walked, or with st.status blocksEnd the index after the value.
//
//go:noescape
func scanBlocks(p *byte, n int, st *blockState) int
