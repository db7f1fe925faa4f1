//go:build !amd64 || purego

package rawjson

func scanVerbatim(*byte, int, *verbatimState) int { panic("rawjson: no block scan here") }
