package anthropic_test

import (
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"

	pt "github.com/llmguard/llmguard/internal/providertest"
	"github.com/llmguard/llmguard/provider"
)

// thinkingBody is a Messages API response with extended thinking, shaped as
// in Anthropic's extended-thinking docs: a thinking block with its
// signature, a redacted_thinking block, text and a tool call.
const thinkingBody = `{"id":"msg_01Thk","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",
"content":[
 {"type":"thinking","thinking":"Let me analyze this step by step...","signature":"WaUjzkypQ2mUEVM36O2TxuC06KN8xyfbJwyem2dw3URve/op91XWHOEBLLqIOMfFG/UvLEczmEsUjavL"},
 {"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"},
 {"type":"text","text":"Based on my analysis, let me check the weather."},
 {"type":"tool_use","id":"toolu_01T","name":"get_weather","input":{"city":"Paris"}}],
"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":120,"output_tokens":80}}`

// thinkingStream is the same answer streamed: thinking_delta events, then
// the signature in a signature_delta, as in Anthropic's streaming docs.
const thinkingStream = "event: message_start\n" +
	`data: {"type":"message_start","message":{"id":"msg_01Thk","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5-20250929","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":120,"output_tokens":1}}}` + "\n\n" +
	"event: content_block_start\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}` + "\n\n" +
	"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"I need to find the GCD of 1071 and 462.\n\n1071 = 2 × 462 + 147"}}` + "\n\n" +
	"event: ping\n" + `data: {"type": "ping"}` + "\n\n" +
	"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"\n462 = 3 × 147 + 21\n147 = 7 × 21 + 0"}}` + "\n\n" +
	"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}}` + "\n\n" +
	"event: content_block_stop\n" + `data: {"type":"content_block_stop","index":0}` + "\n\n" +
	"event: content_block_start\n" + `data: {"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix"}}` + "\n\n" +
	"event: content_block_stop\n" + `data: {"type":"content_block_stop","index":1}` + "\n\n" +
	"event: content_block_start\n" + `data: {"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}` + "\n\n" +
	"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"The GCD is **21**."}}` + "\n\n" +
	"event: content_block_stop\n" + `data: {"type":"content_block_stop","index":2}` + "\n\n" +
	"event: message_delta\n" + `data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":60}}` + "\n\n" +
	"event: message_stop\n" + `data: {"type":"message_stop"}` + "\n\n"

func raw(s string) json.RawMessage { return json.RawMessage(s) }

func TestChatThinking(t *testing.T) {
	up := pt.NewUpstream(t, pt.Reply(200, thinkingBody))
	resp, err := newAdapter(up.URL).Chat(context.Background(), pt.ToolConversation())
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.Part{
		{Type: provider.PartThinking, Extra: map[string]json.RawMessage{"thinking": raw(`"Let me analyze this step by step..."`),
			"signature": raw(`"WaUjzkypQ2mUEVM36O2TxuC06KN8xyfbJwyem2dw3URve/op91XWHOEBLLqIOMfFG/UvLEczmEsUjavL"`)}},
		{Type: provider.PartRedactedThinking, Extra: map[string]json.RawMessage{"data": raw(`"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"`)}},
	}
	if diff := cmp.Diff(want, resp.Thinking); diff != "" {
		t.Errorf("thinking (-want +got):\n%s", diff)
	}
	if resp.Text != "Based on my analysis, let me check the weather." || len(resp.ToolCalls) != 1 {
		t.Errorf("text %q, tool calls %+v", resp.Text, resp.ToolCalls)
	}
}

func TestStreamThinking(t *testing.T) {
	up := pt.NewUpstream(t, pt.SSE(thinkingStream))
	s, err := newAdapter(up.URL).Stream(context.Background(), pt.ToolConversation())
	if err != nil {
		t.Fatal(err)
	}
	chunks, err := pt.Collect(s)
	if err != io.EOF {
		t.Fatalf("stream ended with %v, want io.EOF", err)
	}
	var got []provider.ThinkingDelta
	for _, c := range chunks {
		if c.Thinking != nil {
			got = append(got, *c.Thinking)
			if c.Text != "" || c.ToolCall != nil {
				t.Errorf("thinking chunk also carries content: %+v", c)
			}
		}
	}
	want := []provider.ThinkingDelta{
		{Index: 0, Type: "thinking"},
		{Index: 0, Thinking: "I need to find the GCD of 1071 and 462.\n\n1071 = 2 × 462 + 147"},
		{Index: 0, Thinking: "\n462 = 3 × 147 + 21\n147 = 7 × 21 + 0"},
		{Index: 0, Signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"},
		{Index: 1, Type: "redacted_thinking", Data: "EmwKAhgBEgy3va3pzix"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("thinking deltas (-want +got):\n%s", diff)
	}
	if a := pt.Assemble(chunks); a.Text != "The GCD is **21**." || a.FinishReason != provider.FinishStop {
		t.Errorf("assembled %+v", a)
	}
}
