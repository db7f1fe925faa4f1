//go:build !amd64 || purego

package rawjson

// haveBlocks reports whether scanBlocks runs here.
const haveBlocks = false

func scanBlocks(*byte, int, *blockState) int { panic("rawjson: no block scan here") }
