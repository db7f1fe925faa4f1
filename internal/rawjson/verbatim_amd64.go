//go:build amd64 && !purego

package rawjson

// scanVerbatim walks the whole 64-byte blocks of the n bytes at p, a
// string's contents from the state st holds (its zero value: p is the
// first byte after the opening quote; p starts a rune), while each block
// holds only bytes a verbatim string may hold as they are (no control
// character; st.bad notes runes that are not valid UTF-8, see UTF8 in
// utf8_amd64.h) and the escapes of one byte ('"', '\\', '/', 'b', 'f', 'n', 'r', 't'). It returns, with st.status
// verbatimDone, the index after the closing quote; else the offset of the
// block it stopped at (verbatimOut: fewer than 64 bytes are left;
// verbatimSlow: the block has something else for the byte walk to judge),
// with st.escaped 1 when that block's first byte is escaped.
//
//go:noescape
func scanVerbatim(p *byte, n int, st *verbatimState) int
