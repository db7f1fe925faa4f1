package anthropic_test

import (
	"testing"

	pt "github.com/llmguard/llmguard/internal/providertest"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/anthropic"
)

// bench runs the shared adapter benchmarks (providertest.Bench) on anthropic.
var bench = pt.Bench{
	New:    newAdapter,
	Encode: func(r *provider.Request) ([]byte, error) { return anthropic.Encode(r, "m", false) },
	Decode: anthropic.Decode,
	OK:     okBody,
	Path:   "/v1/messages",
	Header: []string{"x-api-key", "sk-ant-api03-Xk9fQ2mVbT7rLw4ZpN8sYc1HdJ6gEaU3oKiR5yBtMx0vWqFlCe", "anthropic-version", "2023-06-01", "Accept", "application/json"},
}

// BenchmarkChat is a full non-streaming round trip (encode, HTTP over
// 127.0.0.1 with keep-alive, decode) of the tool conversation against an
// in-process httptest server; compare with BenchmarkEncode+BenchmarkDecode
// for what the adapter path adds.
func BenchmarkChat(b *testing.B) { bench.Chat(b) }

func BenchmarkEncode(b *testing.B) { bench.EncodeRequest(b) }

func BenchmarkDecode(b *testing.B) { bench.DecodeResponse(b) }

// BenchmarkBareHTTP is the same exchange (URL, body, headers) with net/http alone.
func BenchmarkBareHTTP(b *testing.B) { bench.BareHTTP(b) }
