package gateway

import (
	"fmt"
	"strings"
	"testing"

	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/anthropic"
	"github.com/llmguard/llmguard/provider/openai"
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

// BenchmarkTranslate is the gateway's own work on a request translated to
// another dialect (issue 19 item 1, the cross-dialect rows of
// BodySize): decode an agent's conversation as the gateway does (what
// routing needs, then the rest: Lean for an OpenAI target, which sends the
// texts as the client wrote them, Full for the others) and encode it for
// the target, no I/O.
func BenchmarkTranslate(b *testing.B) {
	for _, d := range []struct{ client, target string }{{DialectAnthropic, DialectOpenAI}, {DialectOpenAI, DialectAnthropic}} {
		for _, kb := range []int{32, 512} {
			body := agentBody(d.client, d.target, kb<<10)
			b.Run(fmt.Sprintf("%s-to-%s/%dKB", d.client, d.target, kb), func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					in, err := decodeChat(d.client, body, nil)
					if err != nil {
						b.Fatal(err)
					}
					in.req.Passthrough = nil
					if d.target == DialectOpenAI {
						var lean *provider.Request
						if lean, err = in.req.Lean(); err == nil {
							_, err = openai.Encode(lean, "gpt-4o", false)
						}
					} else {
						_, err = anthropic.Encode(in.req, "claude-sonnet-4-5", false)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
