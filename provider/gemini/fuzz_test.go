package gemini

import (
	"net/http"
	"testing"

	"github.com/llmguard/llmguard/provider/internal/httpcall"
	pt "github.com/llmguard/llmguard/provider/internal/providertest"
)

// FuzzDecode: see providertest.FuzzDecode.
func FuzzDecode(f *testing.F) {
	seeds := []string{
		`{"candidates":[{"content":{"parts":[{"text":"hi"},{"functionCall":{"name":"f","args":{"a":1}}}],"role":"model"},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2},"modelVersion":"gemini-2.5-flash"}`,
		"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"hi\"}]},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":1,\"candidatesTokenCount\":1}}\r\n\r\n",
		"data: {\"promptFeedback\":{\"blockReason\":\"SAFETY\"}}\n\ndata: {\"error\":{\"code\":503,\"status\":\"UNAVAILABLE\"}}\n\n",
	}
	pt.FuzzDecode(f, "gemini", seeds, Decode, func(call httpcall.Call, h http.Header) httpcall.Decoder {
		return &decoder{call: call, h: h}
	})
}
