package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// thinkingBody is an Anthropic answer with extended thinking and a tool
// call, shaped as in Anthropic's extended-thinking docs.
const thinkingBody = `{"id":"msg_01Thk","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",
"content":[
 {"type":"thinking","thinking":"Let me analyze this step by step...","signature":"WaUjzkypQ2mUEVM36O2TxuC06KN8xyfbJwyem2dw3URve/op91XWHOEBLLqIOMfFG/UvLEczmEsUjavL"},
 {"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"},
 {"type":"text","text":"Let me check the weather."},
 {"type":"tool_use","id":"toolu_01T","name":"get_weather","input":{"city":"Paris"}}],
"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":120,"output_tokens":80}}`

// thinkingStream is the same answer as Anthropic streams it: thinking_delta
// events, the signature in a signature_delta, then text and the tool call.
const thinkingStream = "event: message_start\n" +
	`data: {"type":"message_start","message":{"id":"msg_01Thk","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5-20250929","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":120,"output_tokens":1}}}` + "\n\n" +
	"event: content_block_start\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}` + "\n\n" +
	"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me analyze "}}` + "\n\n" +
	"event: ping\n" + `data: {"type": "ping"}` + "\n\n" +
	"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"this step by step..."}}` + "\n\n" +
	"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"WaUjzkypQ2mUEVM36O2TxuC06KN8xyfbJwyem2dw3URve/op91XWHOEBLLqIOMfFG/UvLEczmEsUjavL"}}` + "\n\n" +
	"event: content_block_stop\n" + `data: {"type":"content_block_stop","index":0}` + "\n\n" +
	"event: content_block_start\n" + `data: {"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"}}` + "\n\n" +
	"event: content_block_stop\n" + `data: {"type":"content_block_stop","index":1}` + "\n\n" +
	"event: content_block_start\n" + `data: {"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}` + "\n\n" +
	"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Let me check the weather."}}` + "\n\n" +
	"event: content_block_stop\n" + `data: {"type":"content_block_stop","index":2}` + "\n\n" +
	"event: content_block_start\n" + `data: {"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_01T","name":"get_weather","input":{}}}` + "\n\n" +
	"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{\"city\": \"Paris\"}"}}` + "\n\n" +
	"event: content_block_stop\n" + `data: {"type":"content_block_stop","index":3}` + "\n\n" +
	"event: message_delta\n" + `data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":80}}` + "\n\n" +
	"event: message_stop\n" + `data: {"type":"message_stop"}` + "\n\n"

// wantThinkingContent is the content an Anthropic client must get back,
// streamed or not: the thinking blocks with signature and data unchanged,
// before the text and the tool call.
const wantThinkingContent = `[
 {"type":"thinking","thinking":"Let me analyze this step by step...","signature":"WaUjzkypQ2mUEVM36O2TxuC06KN8xyfbJwyem2dw3URve/op91XWHOEBLLqIOMfFG/UvLEczmEsUjavL"},
 {"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"},
 {"type":"text","text":"Let me check the weather."},
 {"type":"tool_use","id":"toolu_01T","name":"get_weather","input":{"city":"Paris"}}]`

// assembleAnthropic rebuilds the content blocks of an Anthropic event
// stream as an SDK does, checking that deltas go to the open block.
func assembleAnthropic(t *testing.T, evs []event) []any {
	t.Helper()
	var blocks []map[string]any
	partial := map[int]string{}
	open := -1
	for _, ev := range evs {
		m, _ := ev.Data.(map[string]any)
		idx := -1
		if f, ok := m["index"].(float64); ok {
			idx = int(f)
		}
		switch ev.Name {
		case "content_block_start":
			if idx != len(blocks) || open != -1 {
				t.Fatalf("content_block_start index %d with %d blocks, block %d open", idx, len(blocks), open)
			}
			blocks = append(blocks, m["content_block"].(map[string]any))
			open = idx
		case "content_block_stop":
			if idx != open {
				t.Fatalf("content_block_stop %d while %d is open", idx, open)
			}
			open = -1
		case "content_block_delta":
			if idx != open {
				t.Fatalf("delta for block %d while %d is open", idx, open)
			}
			d := m["delta"].(map[string]any)
			b := blocks[idx]
			switch d["type"] {
			case "thinking_delta":
				b["thinking"] = b["thinking"].(string) + d["thinking"].(string)
			case "signature_delta":
				b["signature"] = b["signature"].(string) + d["signature"].(string)
			case "text_delta":
				b["text"] = b["text"].(string) + d["text"].(string)
			case "input_json_delta":
				partial[idx] += d["partial_json"].(string)
			default:
				t.Fatalf("unexpected delta %v", d)
			}
		}
	}
	out := make([]any, len(blocks))
	for i, b := range blocks {
		if p, ok := partial[i]; ok {
			var in any
			if err := json.Unmarshal([]byte(p), &in); err != nil {
				t.Fatalf("block %d input %q: %v", i, p, err)
			}
			b["input"] = in
		}
		out[i] = b
	}
	return out
}

// Claude Code with extended thinking and tools: the thinking blocks and
// their signatures come back through the gateway to an Anthropic client
// (else its next turn is rejected), and never reach an OpenAI client.
func TestThinkingThroughGateway(t *testing.T) {
	rec := &exchangeLog{next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if bytes.Contains(b, []byte(`"stream":true`)) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, thinkingStream)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, thinkingBody)
	})}
	up := httptest.NewServer(rec)
	defer up.Close()
	gw := serveGateway(t, `
default_provider: anthropic
providers:
  anthropic: {base_url: `+up.URL+`, api_key: k}
routes:
  default:
    targets: [anthropic/claude-sonnet-4-5]
`)

	var want []any
	if err := json.Unmarshal([]byte(wantThinkingContent), &want); err != nil {
		t.Fatal(err)
	}
	const beta = "interleaved-thinking-2025-05-14"
	anReq := func(stream bool) string {
		s := "false"
		if stream {
			s = "true"
		}
		return `{"model":"claude-sonnet-4-5","max_tokens":16000,"stream":` + s + `,
			"thinking":{"type":"enabled","budget_tokens":10000},
			"tools":[{"name":"get_weather","input_schema":{"type":"object","properties":{"city":{"type":"string"}}}}],
			"messages":[{"role":"user","content":"Weather in Paris?"}]}`
	}
	oaReq := func(stream bool) string {
		s := "false"
		if stream {
			s = "true"
		}
		return `{"model":"claude-sonnet-4-5","stream":` + s + `,"messages":[{"role":"user","content":"Weather in Paris?"}]}`
	}
	tests := []struct {
		name, path, body string
		anthropic        bool
		stream           bool
	}{
		{"anthropic", "/v1/messages", anReq(false), true, false},
		{"anthropic streaming", "/v1/messages", anReq(true), true, true},
		{"openai", "/v1/chat/completions", oaReq(false), false, false},
		{"openai streaming", "/v1/chat/completions", oaReq(true), false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := postOK(t, gw.URL+tt.path, tt.body, "Anthropic-Beta", beta)
			if !tt.anthropic {
				for _, s := range []string{"WaUjzkyp", "EmwKAhgB", "step by step", "thinking"} {
					if bytes.Contains(b, []byte(s)) {
						t.Errorf("an OpenAI client got %q:\n%s", s, b)
					}
				}
				if !bytes.Contains(b, []byte("Let me check the weather.")) || !bytes.Contains(b, []byte("get_weather")) {
					t.Errorf("answer lost its text or tool call:\n%s", b)
				}
				return
			}
			sentBeta := rec.last(t).header.Get("Anthropic-Beta")
			if sentBeta != beta {
				t.Errorf("upstream anthropic-beta = %q, want %q", sentBeta, beta)
			}
			var got []any
			if tt.stream {
				got = assembleAnthropic(t, readEvents(t, bytes.NewReader(b)))
			} else {
				got, _ = decodeJSON(t, b)["content"].([]any)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("content (-want +got):\n%s", d)
			}
		})
	}
}
