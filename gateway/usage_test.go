package gateway

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
)

// fixedUpstream answers every call of a dialect with one recorded answer,
// streamed or not as the request asks: an Anthropic message with cache
// usage and a service tier, an OpenAI completion with cached and reasoning
// tokens.
func fixedUpstream() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		stream := bytes.Contains(b, []byte(`"stream":true`))
		body, ct := fixedAnBody, "application/json"
		switch {
		case strings.HasSuffix(r.URL.Path, "/chat/completions") && stream:
			body, ct = fixedOAStream, "text/event-stream"
		case strings.HasSuffix(r.URL.Path, "/chat/completions"):
			body = fixedOABody
		case stream:
			body, ct = fixedAnStream, "text/event-stream"
		}
		w.Header().Set("Content-Type", ct)
		_, _ = io.WriteString(w, body)
	})
}

// fixedUpstream's answers.
const (
	fixedAnBody = `{"id":"msg_01FixedUpstream","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",
			"content":[{"type":"thinking","thinking":"hmm","signature":"sig"},{"type":"text","text":"Hi."}],"stop_reason":"stop_sequence","stop_sequence":"END",
			"usage":{"input_tokens":9,"cache_creation_input_tokens":20,"cache_read_input_tokens":100,"output_tokens":5,"service_tier":"priority"}}`
	fixedAnStream = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_01FixedUpstream\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5-20250929\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":9,\"cache_creation_input_tokens\":20,\"cache_read_input_tokens\":100,\"output_tokens\":1,\"service_tier\":\"priority\"}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hmm\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"sig\"}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"server_tool_use\",\"id\":\"srvtoolu_1\",\"name\":\"web_search\",\"input\":{}}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"query\\\":\\\"x\\\"}\"}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi.\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"citations_delta\",\"citation\":{\"type\":\"web_search_result_location\",\"url\":\"https://x.test\",\"cited_text\":\"hi\"}}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":2}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"stop_sequence\",\"stop_sequence\":\"END\"},\"usage\":{\"output_tokens\":5}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	fixedOABody = `{"id":"chatcmpl-FixedUpstream","object":"chat.completion","created":1,"model":"gpt-4o-2024-08-06","service_tier":"default",
			"choices":[{"index":0,"message":{"role":"assistant","content":"Hi."},"finish_reason":"stop"}],
			"usage":{"prompt_tokens":129,"completion_tokens":5,"total_tokens":134,"prompt_tokens_details":{"cached_tokens":100},"completion_tokens_details":{"reasoning_tokens":2}}}`
	fixedOAStream = "data: {\"id\":\"chatcmpl-FixedUpstream\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-2024-08-06\",\"service_tier\":\"default\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hi.\"},\"finish_reason\":null}]}\n\n" +
		"data: {\"id\":\"chatcmpl-FixedUpstream\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-2024-08-06\",\"service_tier\":\"default\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" +
		"data: {\"id\":\"chatcmpl-FixedUpstream\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-2024-08-06\",\"service_tier\":\"default\",\"choices\":[],\"usage\":{\"prompt_tokens\":129,\"completion_tokens\":5,\"total_tokens\":134,\"prompt_tokens_details\":{\"cached_tokens\":100},\"completion_tokens_details\":{\"reasoning_tokens\":2}}}\n\n" +
		"data: [DONE]\n\n"
)

// Cache-token usage, the service tier and the upstream's message id are
// carried in both dialects, in answers and streams (issue 19: an Anthropic
// stream reported input_tokens 0 and a new id).
func TestUsageCarried(t *testing.T) {
	s := newRecStack(t, fixedUpstream())
	// What each client dialect must see, whichever target answered.
	anWant := map[string]map[string]any{
		"ant": {"input_tokens": 9.0, "cache_creation_input_tokens": 20.0, "cache_read_input_tokens": 100.0, "output_tokens": 5.0},
		"oai": {"input_tokens": 29.0, "cache_creation_input_tokens": 0.0, "cache_read_input_tokens": 100.0, "output_tokens": 5.0},
	}
	oaWant := map[string]map[string]any{
		"ant": {"prompt_tokens": 129.0, "completion_tokens": 5.0, "total_tokens": 134.0,
			"prompt_tokens_details": map[string]any{"cached_tokens": 100.0}, "completion_tokens_details": map[string]any{"reasoning_tokens": 0.0}},
		"oai": {"prompt_tokens": 129.0, "completion_tokens": 5.0, "total_tokens": 134.0,
			"prompt_tokens_details": map[string]any{"cached_tokens": 100.0}, "completion_tokens_details": map[string]any{"reasoning_tokens": 2.0}},
	}
	for _, route := range []string{"ant", "oai"} {
		t.Run("anthropic client, "+route, func(t *testing.T) {
			r := s.post(t, "/v1/messages", anBody(route, false, ""))
			m := decodeJSON(t, r.body)
			u, _ := m["usage"].(map[string]any)
			wantTier := map[string]string{"ant": "priority", "oai": "standard"}[route]
			if u["service_tier"] != wantTier {
				t.Errorf("usage.service_tier = %v, want %s", u["service_tier"], wantTier)
			}
			delete(u, "service_tier")
			if d := diffAny(anWant[route], u); d != "" {
				t.Errorf("usage (-want +got):\n%s", d)
			}
			if route == "ant" && (m["id"] != "msg_01FixedUpstream" || m["stop_sequence"] != "END") {
				t.Errorf("id %v stop_sequence %v, want the upstream's", m["id"], m["stop_sequence"])
			}

			r = s.post(t, "/v1/messages", anBody(route, true, ""))
			_, end, evs := streamText(t, DialectAnthropic, r.body)
			if end != "done" {
				t.Fatalf("stream end %q: %s", end, r.body)
			}
			start := dig(evs[0].Data, "message", "usage").(map[string]any)
			delta := dig(evs[len(evs)-2].Data, "usage").(map[string]any)
			if route == "ant" {
				if id := dig(evs[0].Data, "message", "id"); id != "msg_01FixedUpstream" {
					t.Errorf("message_start id = %v, want the upstream's msg_01FixedUpstream", id)
				}
				if start["input_tokens"] != 9.0 || start["cache_read_input_tokens"] != 100.0 || start["service_tier"] != "priority" {
					t.Errorf("message_start usage = %v, want the upstream's (input_tokens 9, cache_read 100, priority)", start)
				}
				if ss := dig(evs[len(evs)-2].Data, "delta", "stop_sequence"); ss != "END" {
					t.Errorf("message_delta stop_sequence = %v, want END", ss)
				}
			}
			if route == "ant" {
				// Relayed: the upstream's events as it sent them.
				if string(r.body) != fixedAnStream {
					t.Errorf("stream\n got %q\nwant %q", r.body, fixedAnStream)
				}
			} else if d := diffAny(anWant[route], delta); d != "" {
				t.Errorf("message_delta usage (-want +got):\n%s", d)
			}
		})
		t.Run("openai client, "+route, func(t *testing.T) {
			r := s.post(t, "/v1/chat/completions", oaBody(route, false, ""))
			m := decodeJSON(t, r.body)
			wantTier := map[string]string{"ant": "priority", "oai": "default"}[route]
			if m["service_tier"] != wantTier {
				t.Errorf("service_tier = %v, want %s", m["service_tier"], wantTier)
			}
			if d := diffAny(oaWant[route], m["usage"]); d != "" {
				t.Errorf("usage (-want +got):\n%s", d)
			}
			if d := r.header.Get("X-Llmguard-Dropped"); route == "ant" && d != "answer.content[type=thinking]" {
				t.Errorf("x-llmguard-dropped = %q, want the answer's thinking named", d)
			}
			r = s.post(t, "/v1/chat/completions", oaBody(route, true, `,"stream_options":{"include_usage":true}`))
			_, end, evs := streamText(t, DialectOpenAI, r.body)
			if end != "done" {
				t.Fatalf("stream end %q: %s", end, r.body)
			}
			last := evs[len(evs)-2].Data
			if d := diffAny(oaWant[route], dig(last, "usage")); d != "" {
				t.Errorf("usage chunk (-want +got):\n%s", d)
			}
			if route == "oai" && string(r.body) != fixedOAStream {
				t.Errorf("relayed stream\n got %q\nwant %q", r.body, fixedOAStream)
			}
			// Without include_usage the client gets no usage chunk, though
			// the gateway asked for one.
			r = s.post(t, "/v1/chat/completions", oaBody(route, true, ""))
			_, end, evs = streamText(t, DialectOpenAI, r.body)
			if end != "done" || dig(evs[len(evs)-2].Data, "usage") != nil {
				t.Errorf("stream without include_usage ends %q with %v", end, evs[len(evs)-2].Data)
			}
			if route == "oai" && !strings.HasPrefix(string(r.body), fixedOAStream[:strings.Index(fixedOAStream, "\n\n")]) {
				t.Errorf("relayed stream starts %q", r.body)
			}
		})
	}
}

// richUpstream answers with what the canonical form lacks: Anthropic server
// tool blocks, citations, a container and stop details; OpenAI logprobs, a
// refusal, annotations and a system fingerprint.
func richUpstream() (http.Handler, map[string]string) {
	bodies := map[string]string{
		"/v1/messages": `{"id":"msg_01Rich","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[` +
			`{"type":"server_tool_use","id":"srvtoolu_01","name":"web_search","input":{"query":"weather paris"}},` +
			`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_01","content":[{"type":"web_search_result","url":"https://x.test","title":"X","encrypted_content":"E","page_age":null}]},` +
			`{"type":"text","text":"Sunny.","citations":[{"type":"web_search_result_location","url":"https://x.test","title":"X","encrypted_index":"I","cited_text":"sun"}]}],` +
			`"container":null,"stop_reason":"end_turn","stop_sequence":null,"stop_details":null,` +
			`"usage":{"input_tokens":9,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":5,"server_tool_use":{"web_search_requests":1},"service_tier":"standard"}}`,
		"/v1/chat/completions": `{"id":"chatcmpl-Rich","object":"chat.completion","created":1,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_1",` +
			`"choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"I can't.","annotations":[]},` +
			`"logprobs":{"content":[{"token":"I","logprob":-0.1,"bytes":[73],"top_logprobs":[]}]},"finish_reason":"stop"}],` +
			`"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12},"service_tier":"default"}`,
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, bodies[r.URL.Path])
	}), bodies
}

// A request that stays in its dialect gets the provider's answer byte for
// byte: nothing the canonical form lacks is lost.
func TestSameDialectAnswerRelayed(t *testing.T) {
	up, bodies := richUpstream()
	s := newRecStack(t, up)
	for _, tt := range []struct{ path, body string }{
		{"/v1/messages", anBody("ant", false, `,"tools":[{"type":"web_search_20250305","name":"web_search","max_uses":1}]`)},
		{"/v1/chat/completions", oaBody("oai", false, `,"logprobs":true`)},
	} {
		t.Run(tt.path, func(t *testing.T) {
			r := s.post(t, tt.path, tt.body)
			if r.status != 200 || string(r.body) != bodies[tt.path] {
				t.Errorf("status %d body\n got %s\nwant %s", r.status, r.body, bodies[tt.path])
			}
		})
	}
	// Another dialect gets the canonical translation.
	r := s.post(t, "/v1/messages", anBody("oai", false, ""))
	if m := decodeJSON(t, r.body); dig(m, "content", 0, "text") != "I can't." || m["type"] != "message" {
		t.Errorf("translated answer %s", r.body)
	}
}

// A relayed Anthropic stream that breaks after its first token continues
// on the next target as one well-formed message: one message_start, block
// numbers that go on, one message_stop.
func TestRelayedStreamContinues(t *testing.T) {
	st := newStackConfig(t, `
providers:
  anthropic: {base_url: MOCK, api_key: test-ant-key}
routes:
  r:
    targets: [anthropic/m1+fault=midstream:3, anthropic/m1]
models:
  anthropic/m1: {prefill: true}
`, nil)
	r := st.post(t, "/v1/messages", anBody("r", true, ""), "anthropic-version", "2023-06-01")
	text, end, evs := streamText(t, DialectAnthropic, r.body)
	if end != "done" || text == "" {
		t.Fatalf("end %q text %q: %s", end, text, r.body)
	}
	count := map[string]int{}
	last := -1
	for _, ev := range evs {
		count[ev.Name]++
		if ev.Name == "content_block_start" {
			i := int(dig(ev.Data, "index").(float64))
			if i <= last {
				t.Errorf("content_block_start index %d after %d", i, last)
			}
			last = i
		}
	}
	if count["message_start"] != 1 || count["message_stop"] != 1 || count["message_delta"] != 1 {
		t.Errorf("events %v, want one message_start, message_delta and message_stop", count)
	}
	if !strings.Contains(string(r.body), ": llmguard:") {
		t.Errorf("no continuation comment: %s", r.body)
	}
}

// An Anthropic client's stream from an Anthropic target starts with the
// upstream's message id and prompt usage however the answer came (issue 19
// item 5): streamed, as a whole JSON body to the streaming request (an
// upstream that does not stream), or replayed for a repeated
// Idempotency-Key (the same message_start as the first call's).
func TestStreamStartCarried(t *testing.T) {
	whole := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, fixedAnBody)
	})
	fixed := map[string]any{"input_tokens": 9.0, "cache_creation_input_tokens": 20.0, "cache_read_input_tokens": 100.0,
		"service_tier": "priority"}
	for _, tt := range []struct {
		name      string
		up        http.Handler
		id        string
		wantUsage map[string]any // nil: the mock's, checked on the replay only
	}{
		{"streamed", fixedUpstream(), "msg_01FixedUpstream", fixed},
		{"whole body", whole, "msg_01FixedUpstream", fixed},
		{"mock", nil, "", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newRecStack(t, tt.up)
			var first any
			for _, call := range []string{"first", "replayed"} {
				r := s.post(t, "/v1/messages", anBody("ant", true, ""), "Idempotency-Key", "start-"+tt.name)
				_, end, evs := streamText(t, DialectAnthropic, r.body)
				if end != "done" || evs[0].Name != "message_start" {
					t.Fatalf("%s: end %q: %s", call, end, r.body)
				}
				msg := dig(evs[0].Data, "message").(map[string]any)
				if id := msg["id"]; tt.id != "" && id != tt.id {
					t.Errorf("%s: message_start id = %v, want the upstream's %s", call, id, tt.id)
				}
				u := msg["usage"].(map[string]any)
				// Output so far: the upstream's 1 when it streamed, 0 when
				// the whole answer came at once.
				delete(u, "output_tokens")
				if tt.wantUsage != nil {
					if d := diffAny(tt.wantUsage, u); d != "" {
						t.Errorf("%s: message_start usage (-want +got):\n%s", call, d)
					}
				} else if u["input_tokens"] == 0.0 {
					t.Errorf("%s: message_start usage %v, want the mock's input_tokens", call, u)
				}
				if first == nil {
					first = msg
				} else if d := diffAny(first, msg); d != "" {
					t.Errorf("replayed message_start differs from the first (-first +replayed):\n%s", d)
				}
			}
		})
	}
}
