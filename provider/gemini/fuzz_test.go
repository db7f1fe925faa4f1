package gemini

import (
	"context"
	"net/http"
	"testing"

	pt "github.com/llmguard/llmguard/internal/providertest"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/internal/httpcall"
)

// FuzzDecode: see providertest.FuzzDecode.
func FuzzDecode(f *testing.F) {
	seeds := []string{
		`{"candidates":[{"content":{"parts":[{"text":"hi"},{"functionCall":{"name":"f","args":{"a":1}}}],"role":"model"},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2},"modelVersion":"gemini-2.5-flash"}`,
		"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"hi\"}]},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":1,\"candidatesTokenCount\":1}}\r\n\r\n",
		"data: {\"promptFeedback\":{\"blockReason\":\"SAFETY\"}}\n\ndata: {\"error\":{\"code\":503,\"status\":\"UNAVAILABLE\"}}\n\n",
	}
	pt.FuzzDecode(f, seeds, Decode, func(resp *http.Response) provider.Stream {
		call := httpcall.Call{Provider: "gemini", Model: "m"}
		return call.NewStream(context.Background(), resp, &decoder{call: call, h: resp.Header}, "")
	})
}
