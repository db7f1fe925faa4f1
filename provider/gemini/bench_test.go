package gemini_test

import (
	"testing"

	pt "github.com/llmguard/llmguard/internal/providertest"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/gemini"
)

// bench runs the shared adapter benchmarks (providertest.Bench) on gemini.
var bench = pt.Bench{
	New:    newAdapter,
	Encode: func(r *provider.Request) ([]byte, error) { return gemini.Encode(r, "gemini-2.5-flash") },
	Decode: gemini.Decode,
	OK:     okBody,
	Path:   "/v1beta/models/m-1:generateContent",
	Header: []string{"x-goog-api-key", "AIzaSyD4kT9xQw2LmN7pRb3VcZ8sHf1JgY6uE0a"},
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
