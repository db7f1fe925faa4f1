// Package rawjson holds the project's JSON policy and the few hand-written
// JSON pieces a benchmark in the repo shows to matter, each guarded by a
// differential fuzz test against the JSON library.
//
// The library is github.com/segmentio/encoding/json (a drop-in for
// encoding/json, several times faster): code encodes with its Marshal and
// AppendEscape and decodes with Unmarshal here, which keeps the library's
// speed and reports failures as encoding/json does (FuzzUnmarshal).
//
// Hand-written, for request bodies relayed in their own dialect: Splice
// sets, replaces or deletes top-level fields and copies every other byte
// as sent (FuzzSplice), on the walk EachField and EachElement do, which
// skips a long object or array (a conversation's messages) 64 bytes a step
// with AVX2 where the CPU has it, 2–5× as fast as the byte-at-a-time walk
// (blocks_amd64.s; FuzzSkipBlocks against that walk, BenchmarkSkip); Valid is
// json.Valid's grammar in one pass (FuzzValid). For requests translated to
// another dialect, Verbatim tells the texts that may be sent as the client
// wrote them, 64 bytes a step with AVX2 likewise (verbatim_amd64.s, the
// runes it passes judged by utf8.Valid; FuzzVerbatimBlocks against the
// byte walk, FuzzVerbatim against the library, BenchmarkVerbatim); a
// lean decoding reads them with Cursor.Verbatim. For stream events, Cursor
// reads the fields a decoder needs in one pass that also checks the event
// (FuzzCursor; each decoder's scan is fuzzed against Unmarshal).
package rawjson
