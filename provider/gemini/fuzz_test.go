package gemini

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/llmguard/llmguard/provider/internal/httpcall"
)

// FuzzDecode feeds arbitrary bytes to the response decoder and, as an event
// stream, to the stream decoder: neither may panic or loop, and a stream
// always ends (io.EOF or an error).
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"candidates":[{"content":{"parts":[{"text":"hi"},{"functionCall":{"name":"f","args":{"a":1}}}],"role":"model"},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2},"modelVersion":"gemini-2.5-flash"}`,
		"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"hi\"}]},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":1,\"candidatesTokenCount\":1}}\r\n\r\n",
		"data: {\"promptFeedback\":{\"blockReason\":\"SAFETY\"}}\n\ndata: {\"error\":{\"code\":503,\"status\":\"UNAVAILABLE\"}}\n\n",
		"", "null", "[]", "{}", "data: {\"x\n", "event: error\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if resp, err := Decode(b); err == nil && resp == nil {
			t.Fatal("Decode returned neither a response nor an error")
		}
		resp := &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(b))}
		call := httpcall.Call{Provider: "gemini", Model: "m"}
		st := call.NewStream(context.Background(), resp, &decoder{call: call, h: resp.Header}, "")
		for i := 0; ; i++ {
			if _, err := st.Recv(); err != nil {
				break
			}
			if i > len(b)+10 {
				t.Fatalf("stream of %d bytes gave more than %d chunks", len(b), i)
			}
		}
	})
}
