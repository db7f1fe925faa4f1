package anthropic

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
		`{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"hi"},{"type":"tool_use","id":"toolu_1","name":"f","input":{"a":1}}],"stop_reason":"tool_use","usage":{"input_tokens":3,"output_tokens":2}}`,
		"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"c\",\"usage\":{\"input_tokens\":1}}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\",\"input\":{}}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
		"", "null", "[]", "{}", "data: {\"x\n", "event: error\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if resp, err := Decode(b); err == nil && resp == nil {
			t.Fatal("Decode returned neither a response nor an error")
		}
		resp := &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(b))}
		call := httpcall.Call{Provider: "anthropic", Model: "m"}
		st := call.NewStream(context.Background(), resp, &decoder{call: call, h: resp.Header, tools: map[int]int{}}, "")
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
