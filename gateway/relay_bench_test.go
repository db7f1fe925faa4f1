package gateway

import (
	"strings"
	"testing"

	"github.com/llmguard/llmguard/provider/anthropic"
	"golang.org/x/tools/txtar"
)

// BenchmarkClaudeCodeBody decodes a recorded Claude Code request (about
// 50 KB: system blocks, tools, system messages) and encodes it for an
// Anthropic target: relayed (the client's body spliced, what the gateway
// does) and re-encoded from the canonical form (what it did before).
func BenchmarkClaudeCodeBody(b *testing.B) {
	ar, err := txtar.ParseFile("testdata/claude-code/hello.txtar")
	if err != nil {
		b.Fatal(err)
	}
	var body []byte
	for _, f := range ar.Files {
		if strings.HasSuffix(f.Name, ".json") {
			body = f.Data
			break
		}
	}
	for _, mode := range []string{"relayed", "re-encoded"} {
		b.Run(mode, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				in, err := decodeAnthropic(body)
				if err != nil {
					b.Fatal(err)
				}
				if mode == "re-encoded" {
					in.req.Passthrough = nil
				}
				if _, err := anthropic.Encode(in.req, "claude-opus-5-5", true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
