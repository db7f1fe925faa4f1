package openai

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/llmguard/llmguard/provider/internal/wire"
)

// FuzzDecode feeds arbitrary bytes to the response decoder and, as an event
// stream, to the stream decoder: neither may panic or loop, and a stream
// always ends (io.EOF or an error).
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"id":"c","model":"gpt","choices":[{"index":0,"message":{"content":"hi","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}`,
		"data: {\"id\":\"c\",\"model\":\"g\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\",\"tool_calls\":[{\"index\":0,\"id\":\"x\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]},\"finish_reason\":\"stop\"}]}\n\ndata: {\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n",
		"data: {\"error\":{\"code\":502,\"message\":\"Provider returned error\"},\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"error\"}]}\n\n",
		"", "null", "[]", "{}", "data: {\"x\n", "event: error\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if resp, err := Decode(b); err == nil && resp == nil {
			t.Fatal("Decode returned neither a response nor an error")
		}
		resp := &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(b))}
		call := wire.Call{Provider: "openai", Model: "m"}
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
