package openai_test

import (
	"context"
	"testing"

	pt "github.com/llmguard/llmguard/provider/internal/providertest"
	"github.com/llmguard/llmguard/provider/openai"
)

// BenchmarkChat is a full non-streaming round trip (encode, HTTP over
// 127.0.0.1 with keep-alive, decode) of the tool conversation against an
// in-process httptest server; compare with BenchmarkEncode+BenchmarkDecode
// for what the adapter path adds.
func BenchmarkChat(b *testing.B) {
	up := pt.Server(b, pt.Reply(200, okBody))
	a := newAdapter(up.URL)
	req := pt.ToolConversation()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Chat(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncode(b *testing.B) {
	req := pt.ToolConversation()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := openai.Encode(req, "m", false); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	body := []byte(okBody)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := openai.Decode(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBareHTTP is the same exchange (URL, body, headers) with net/http alone.
func BenchmarkBareHTTP(b *testing.B) {
	up := pt.Server(b, pt.Reply(200, okBody))
	body, err := openai.Encode(pt.ToolConversation(), "m", false)
	if err != nil {
		b.Fatal(err)
	}
	pt.BenchmarkBareHTTP(b, up.URL+"/v1/chat/completions", body, "Authorization", "Bearer sk-proj-Q8vT3kLm9XzR2bWn5YcJ7pHf4sDg1uEa6oKi0tNxMw", "Accept", "application/json")
}
