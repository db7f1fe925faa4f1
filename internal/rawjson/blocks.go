package rawjson

// Skipping a long object or array (a relayed request's messages) 64 bytes
// a step, as simdjson finds a document's structure: per block, a mask of
// its quotes, backslashes and brackets; the quotes a backslash escapes
// dropped; the bytes inside strings found from the parity of the quotes
// before them; the brackets outside strings counted. It walks the same
// way as skipNested, on every input (FuzzSkipBlocks): a backslash outside
// a string, which no valid JSON has and which skipNested reads as any
// other byte, sends the walk back to skipNested from the start.

// minBlocks is the length from which skipValue skips an object or array a
// block at a time.
const minBlocks = 256

// blockState is where a scan of blocks stopped (scanBlocks).
type blockState struct {
	depth    int64  // brackets open at the next block
	inString uint64 // all ones when the next block starts inside a string
	escaped  uint64 // 1 when the next block's first byte is escaped
	status   int64  // blocksOut, blocksEnd or blocksOdd
}

const (
	blocksOut = iota // fewer than 64 bytes are left
	blocksEnd        // the value ended: scanBlocks returned the index after it
	blocksOdd        // a backslash outside a string: skipNested decides
)

// skipBlocks is skipNested(b, i, 0) for the object or array at b[i], a
// block at a time where the CPU has the vector instructions for it.
func skipBlocks(b []byte, i int) (int, error) {
	if !haveBlocks {
		return skipNested(b, i, 0)
	}
	var st blockState
	n := scanBlocks(&b[i], len(b)-i, &st)
	switch st.status {
	case blocksEnd:
		return i + n, nil
	case blocksOdd:
		return skipNested(b, i, 0)
	}
	j := i + n
	if st.inString != 0 { // finish the string, as skipString would
		if st.escaped != 0 {
			j++
		}
		for ; j < len(b) && b[j] != '"'; j++ {
			if b[j] == '\\' {
				j++
			}
		}
		if j >= len(b) {
			return 0, ErrMalformed
		}
		j++
	}
	return skipNested(b, j, int(st.depth))
}
