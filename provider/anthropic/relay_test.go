package anthropic_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	pt "github.com/llmguard/llmguard/internal/providertest"
	"github.com/llmguard/llmguard/provider"
)

// richMessage is an answer with what the canonical form lacks: a server tool
// call and its result, citations, a container, stop details, server tool
// usage; richStream is the same answer streamed.
const richMessage = `{"id":"msg_01Rich","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[` +
	`{"type":"server_tool_use","id":"srvtoolu_01","name":"web_search","input":{"query":"weather paris"}},` +
	`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_01","content":[{"type":"web_search_result","url":"https://x.test","title":"X","encrypted_content":"E","page_age":null}]},` +
	`{"type":"text","text":"Sunny.","citations":[{"type":"web_search_result_location","url":"https://x.test","title":"X","encrypted_index":"I","cited_text":"sun"}]},` +
	`{"type":"thinking","thinking":"Done.","signature":"sig1"}],` +
	`"container":null,"stop_reason":"end_turn","stop_sequence":null,"stop_details":null,` +
	`"usage":{"input_tokens":9,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":5,"server_tool_use":{"web_search_requests":1},"service_tier":"standard"}}`

const richStream = "event: message_start\n" +
	`data: {"type":"message_start","message":{"id":"msg_01Rich","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"container":null,"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":9,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1,"service_tier":"standard"}}}` + "\n\n" +
	"event: content_block_start\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_01","name":"web_search","input":{}}}` + "\n\n" +
	"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"query\": "}}` + "\n\n" +
	"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"\"weather paris\"}"}}` + "\n\n" +
	"event: content_block_stop\n" + `data: {"type":"content_block_stop","index":0}` + "\n\n" +
	"event: content_block_start\n" + `data: {"type":"content_block_start","index":1,"content_block":{"type":"web_search_tool_result","tool_use_id":"srvtoolu_01","content":[{"type":"web_search_result","url":"https://x.test","title":"X","encrypted_content":"E","page_age":null}]}}` + "\n\n" +
	"event: content_block_stop\n" + `data: {"type":"content_block_stop","index":1}` + "\n\n" +
	"event: content_block_start\n" + `data: {"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}` + "\n\n" +
	"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":2,"delta":{"type":"citations_delta","citation":{"type":"web_search_result_location","url":"https://x.test","title":"X","encrypted_index":"I","cited_text":"sun"}}}` + "\n\n" +
	"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Sun"}}` + "\n\n" +
	"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"ny."}}` + "\n\n" +
	"event: content_block_stop\n" + `data: {"type":"content_block_stop","index":2}` + "\n\n" +
	"event: content_block_start\n" + `data: {"type":"content_block_start","index":3,"content_block":{"type":"thinking","thinking":"","signature":""}}` + "\n\n" +
	"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":3,"delta":{"type":"thinking_delta","thinking":"Done."}}` + "\n\n" +
	"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":3,"delta":{"type":"signature_delta","signature":"sig1"}}` + "\n\n" +
	"event: content_block_stop\n" + `data: {"type":"content_block_stop","index":3}` + "\n\n" +
	"event: message_delta\n" + `data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null,"stop_details":null},"usage":{"output_tokens":5,"server_tool_use":{"web_search_requests":1}}}` + "\n\n" +
	"event: message_stop\n" + `data: {"type":"message_stop"}` + "\n\n"

// A relayed request's stream rebuilds the Message the API gives the same
// request without streaming: every block, field and usage count.
func TestStreamRebuildsRelayedMessage(t *testing.T) {
	body := []byte(`{"model":"claude-sonnet-4-5","max_tokens":64,"messages":[{"role":"user","content":"weather?"}]}`)
	relayed := &provider.Request{Dialect: "anthropic", Passthrough: &provider.Passthrough{Dialect: "anthropic", Body: body}, Assemble: true,
		Messages: []provider.Message{{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: "weather?"}}}}}
	for _, tc := range []struct {
		name string
		up   string // "sse", or "json" for a server that does not stream
	}{{"stream", "sse"}, {"json answer to a stream request", "json"}} {
		t.Run(tc.name, func(t *testing.T) {
			h := pt.SSE(richStream)
			if tc.up == "json" {
				h = pt.Reply(200, richMessage)
			}
			up := pt.NewUpstream(t, h)
			s, err := newAdapter(up.URL).Stream(context.Background(), relayed)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := pt.Collect(s); err != nil && err.Error() != "EOF" {
				t.Fatal(err)
			}
			ra, ok := s.(provider.RawAnswerer)
			if !ok {
				t.Fatalf("%T is not a RawAnswerer", s)
			}
			if d := cmp.Diff(pt.JSON(t, []byte(richMessage)), pt.JSON(t, ra.RawAnswer())); d != "" {
				t.Errorf("rebuilt Message (-non-streamed +rebuilt):\n%s", d)
			}
		})
	}
	// A stream relayed to its client (no Assemble) rebuilds nothing.
	relayedStream := *relayed
	relayedStream.Assemble = false
	up := pt.NewUpstream(t, pt.SSE(richStream))
	s, err := newAdapter(up.URL).Stream(context.Background(), &relayedStream)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = pt.Collect(s)
	if raw := s.(provider.RawAnswerer).RawAnswer(); raw != nil {
		t.Errorf("raw answer for a stream relayed to its client: %s", raw)
	}
	// A request that is not relayed has no raw answer.
	up = pt.NewUpstream(t, pt.SSE(richStream))
	s, err = newAdapter(up.URL).Stream(context.Background(), pt.ToolConversation())
	if err != nil {
		t.Fatal(err)
	}
	_, _ = pt.Collect(s)
	if raw := s.(provider.RawAnswerer).RawAnswer(); raw != nil {
		t.Errorf("raw answer for a translated request: %s", raw)
	}
}
