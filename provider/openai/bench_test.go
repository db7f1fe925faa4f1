package openai_test

import (
	"testing"

	pt "github.com/llmguard/llmguard/internal/providertest"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/openai"
)

// bench runs the shared adapter benchmarks (providertest.Bench) on openai.
var bench = pt.Bench{
	New:    newAdapter,
	Encode: func(r *provider.Request) ([]byte, error) { return openai.Encode(r, "m", false) },
	Decode: openai.Decode,
	OK:     okBody,
	Path:   "/v1/chat/completions",
	Header: []string{"Authorization", "Bearer sk-proj-Q8vT3kLm9XzR2bWn5YcJ7pHf4sDg1uEa6oKi0tNxMw", "Accept", "application/json"},
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
