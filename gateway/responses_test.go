package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/llmguard/llmguard/internal/pipenet"
	"github.com/llmguard/llmguard/mock"
)

// rsConfig routes Responses API calls to every adapter family (the test
// providers and Gemini and DeepSeek); MOCK is the recording upstream in
// front of the mock.
const rsConfig = mockProviders + `  gemini: {base_url: MOCK, api_key: AIzaTestKey}
  deepseek: {base_url: MOCK/deepseek/v1, api_key: sk-test-ds}
routes:
  default:
    targets: [anthropic/claude-sonnet-4-5, openai/gpt-4o]
  oai: {targets: [openai/gpt-4o]}
  ant: {targets: [anthropic/claude-sonnet-4-5]}
  gem: {targets: [gemini/gemini-2.5-flash]}
  ds: {targets: [deepseek/deepseek-chat]}
  ant-down:
    targets: [anthropic/claude-sonnet-4-5+fault=529, openai/gpt-4o]
    retry: {max_attempts: 1}
  oai-down:
    targets: [openai/gpt-4o+fault=503, anthropic/claude-sonnet-4-5]
    retry: {max_attempts: 1}
  oai-mid: {targets: ["openai/gpt-4o+fault=midstream:2"]}
  ant-mid: {targets: ["anthropic/claude-sonnet-4-5+fault=midstream:2"]}
`

type rsStack struct {
	*stack
	up *exchangeLog
}

func newRsStack(t *testing.T) *rsStack { return newUpStack(t, rsConfig) }

// newUpStack is a gateway over yaml (UP, or MOCK as in mockProviders, is
// the recording upstream in front of the mock), over pipenet like newStack.
func newUpStack(t *testing.T, yaml string) *rsStack { return newUpStackOpts(t, yaml, nil) }

// newUpStackOpts is newUpStack with the gateway's options (Engine, Config
// and Logger are set here).
func newUpStackOpts(t *testing.T, yaml string, opts *Options) *rsStack {
	t.Helper()
	ms := mock.New(nil)
	up := &exchangeLog{next: ms}
	ts := pipenet.NewServer(up)
	t.Cleanup(ts.Close)
	st := &stack{mock: ms}
	st.srv, _ = newGateway(t, strings.NewReplacer("UP", ts.URL, "MOCK", ts.URL).Replace(yaml), ts.Client(), nil, opts)
	st.gw = pipenet.NewServer(st.srv.Handler())
	t.Cleanup(st.gw.Close)
	return &rsStack{st, up}
}

const rsTools = `,"tools":[{"type":"function","name":"get_weather","description":"Weather now","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},"strict":false}]`

func decodeRs(t *testing.T, b []byte) map[string]any {
	t.Helper()
	m := decodeJSON(t, b)
	if m["object"] != "response" {
		t.Fatalf("not a response object: %s", b)
	}
	return m
}

// outputText joins the text of a response object's message items, as the
// SDKs' output_text does.
func outputText(m map[string]any) string {
	var s strings.Builder
	out, _ := m["output"].([]any)
	for _, it := range out {
		if dig(it, "type") != "message" {
			continue
		}
		parts, _ := dig(it, "content").([]any)
		for _, p := range parts {
			if dig(p, "type") == "output_text" {
				s.WriteString(dig(p, "text").(string))
			}
		}
	}
	return s.String()
}

// Issue 10 item 5: POST /v1/responses answers on every provider,
// translated; the upstream gets its own dialect with the instructions as
// the system prompt and max_output_tokens as its token limit.
func TestResponsesTranslated(t *testing.T) {
	st := newRsStack(t)
	tests := []struct {
		route, target, model, path, system, limit string
	}{
		{"ant", "anthropic/claude-sonnet-4-5", "claude-sonnet-4-5", "/v1/messages", `"system":"Be brief.`, `"max_tokens":64`},
		{"gem", "gemini/gemini-2.5-flash", "gemini-2.5-flash", "/v1beta/models/gemini-2.5-flash:streamGenerateContent", `"systemInstruction"`, `"maxOutputTokens":64`},
		{"ds", "deepseek/deepseek-chat", "deepseek-chat", "/deepseek/v1/chat/completions", `{"role":"system","content":"Be brief.`, `"max_tokens":64`},
	}
	for _, tt := range tests {
		t.Run(tt.route, func(t *testing.T) {
			st.up.reset()
			body := `{"model":"` + tt.route + `","instructions":"Be brief.","input":[{"role":"developer","content":"Answer in English."},{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"xyz"},{"role":"user","content":[{"type":"input_text","text":"Say hello to the gateway"}]}],"max_output_tokens":64,"store":true,"include":["reasoning.encrypted_content"]}`
			rep := st.post(t, "/v1/responses", body)
			if rep.status != 200 {
				t.Fatalf("%d %s", rep.status, rep.body)
			}
			m := decodeRs(t, rep.body)
			if got := outputText(m); got != "Mock answer from "+tt.model+": Say hello to the gateway" {
				t.Errorf("output_text %q", got)
			}
			id, _ := m["id"].(string)
			if !strings.HasPrefix(id, "resp_") || m["status"] != "completed" || m["model"] != tt.model || m["store"] != true ||
				m["instructions"] != "Be brief." || dig(m, "output", 0, "role") != "assistant" ||
				!strings.HasPrefix(dig(m, "output", 0, "id").(string), "msg_") {
				t.Errorf("response object: %s", rep.body)
			}
			if dig(m, "usage", "output_tokens").(float64) <= 0 || dig(m, "usage", "total_tokens") == nil {
				t.Errorf("usage: %v", m["usage"])
			}
			if h := rep.header.Get("X-Llmguard-Target"); h != tt.target {
				t.Errorf("target %q", h)
			}
			if h := rep.header.Get("X-Llmguard-Dropped"); strings.Contains(h, "store") || !strings.Contains(h, "include") ||
				!strings.Contains(h, "input[type=reasoning]") {
				t.Errorf("x-llmguard-dropped %q", h)
			}
			up := st.up.last(t)
			if up.path != tt.path || !bytes.Contains(up.req, []byte(tt.system)) || !bytes.Contains(up.req, []byte("Answer in English.")) ||
				!bytes.Contains(up.req, []byte(tt.limit)) {
				t.Errorf("upstream %s got %s", up.path, up.req)
			}
		})
	}
}

// An OpenAI target gets the client's body unchanged but for the model (and
// the stream flag: the engine streams a non-streaming call upstream), and
// the client gets OpenAI's response object unchanged (the one its
// response.completed event carries): nothing the gateway does not know is
// lost either way.
func TestResponsesRelayedLossless(t *testing.T) {
	st := newRsStack(t)
	body := `{"model":"oai","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi there"},{"type":"input_image","image_url":"https://example.com/a.png","detail":"low"}]}],"include":["reasoning.encrypted_content"],"store":false,"reasoning":{"effort":"low","summary":"auto"},"text":{"format":{"type":"json_schema","name":"x","schema":{"type":"object"},"strict":true}},"prompt_cache_key":"k1","future_field":{"a":[1,2]},"fallbacks":["ant"]}`
	rep := st.post(t, "/v1/responses", body)
	if rep.status != 200 {
		t.Fatalf("%d %s", rep.status, rep.body)
	}
	up := st.up.last(t)
	want := strings.Replace(strings.Replace(body, `,"fallbacks":["ant"]`, "", 1), `"model":"oai"`, `"model":"gpt-4o"`, 1)
	want = strings.TrimSuffix(want, "}") + `,"stream":true}`
	if up.path != "/v1/responses" || string(up.req) != want {
		t.Errorf("upstream %s got\n%s\nwant\n%s", up.path, up.req, want)
	}
	if final := completedResponse(t, up.resp); !bytes.Equal(rep.body, final) {
		t.Errorf("client got\n%s\nupstream's response.completed carries\n%s", rep.body, final)
	}
	if rep.header.Get("X-Llmguard-Target") != "openai/gpt-4o" || rep.header.Get("X-Request-Id") == "" || rep.header.Get("X-Llmguard-Dropped") != "" {
		t.Errorf("headers %v", rep.header)
	}
	// A body that already names the target's model goes out byte for byte.
	exact := `{"model":"openai/gpt-4o","input":"x","stream":false}`
	st.post(t, "/v1/responses", exact)
	if got := st.up.last(t).req; string(got) != `{"model":"gpt-4o","input":"x","stream":true}` {
		t.Errorf("upstream got %s", got)
	}
}

// completedResponse is the response object of a Responses API stream's
// response.completed event.
func completedResponse(t *testing.T, stream []byte) []byte {
	t.Helper()
	for _, line := range bytes.Split(stream, []byte("\n")) {
		data, ok := bytes.CutPrefix(line, []byte("data: "))
		if !ok || !bytes.Contains(data, []byte(`"type":"response.completed"`)) {
			continue
		}
		var e struct {
			Response json.RawMessage `json:"response"`
		}
		if err := json.Unmarshal(data, &e); err != nil {
			t.Fatal(err)
		}
		return e.Response
	}
	t.Fatalf("no response.completed in %s", stream)
	return nil
}

// Tools round trip through a translating target: the call comes back as a
// function_call item, and its function_call_output goes back as the
// target's tool result.
func TestResponsesTools(t *testing.T) {
	st := newRsStack(t)
	for _, route := range []string{"ant", "gem", "ds", "oai"} {
		t.Run(route, func(t *testing.T) {
			rep := st.post(t, "/v1/responses", `{"model":"`+route+`","input":"What is the weather in Paris?","tool_choice":"required"`+rsTools+`}`)
			m := decodeRs(t, rep.body)
			var call map[string]any
			for _, it := range m["output"].([]any) {
				if dig(it, "type") == "function_call" {
					call = it.(map[string]any)
				}
			}
			if rep.status != 200 || call == nil || call["name"] != "get_weather" || call["arguments"] != `{"city":"mock"}` ||
				call["call_id"] == "" || call["status"] != "completed" {
				t.Fatalf("%d %s", rep.status, rep.body)
			}
			next := fmt.Sprintf(`{"model":%q,"input":[{"role":"user","content":"What is the weather in Paris?"},`+
				`{"type":"function_call","call_id":%q,"name":"get_weather","arguments":"{\"city\":\"Paris\"}"},`+
				`{"type":"function_call_output","call_id":%q,"output":"sunny, 21 C"}]`+rsTools+`}`, route, call["call_id"], call["call_id"])
			rep = st.post(t, "/v1/responses", next)
			if got := outputText(decodeRs(t, rep.body)); !strings.Contains(got, "the tool returned: sunny, 21 C") {
				t.Errorf("after the tool result: %q", got)
			}
		})
	}
}

// previous_response_id, and an item_reference to an item the gateway does
// not hold, need state only OpenAI has: a route without an OpenAI target
// refuses them in one line saying what to send instead; a route with one
// sends them only there, never to a translating target.
func TestResponsesStateRefused(t *testing.T) {
	st := newRsStack(t)
	for _, tt := range []struct{ body, says, fix string }{
		{`{"model":"ant","previous_response_id":"resp_123","input":"and then?"}`,
			"previous_response_id: the gateway keeps no conversation state", `send the whole conversation in "input"`},
		{`{"model":"gem","input":[{"type":"item_reference","id":"msg_1"},{"role":"user","content":"and then?"}]}`,
			`item_reference "msg_1": the gateway holds no item with this id`, `"store": false`},
	} {
		st.up.reset()
		rep := st.post(t, "/v1/responses", tt.body)
		d, typ, msg := errorDialect(t, rep.header.Get("Content-Type"), rep.body)
		if rep.status != 400 || d != DialectOpenAI || typ != "invalid_request_error" || !strings.HasPrefix(msg, tt.says) ||
			!strings.Contains(msg, tt.fix) || strings.Contains(msg, "\n") || rep.header.Get("X-Should-Retry") != "false" {
			t.Errorf("%d %s", rep.status, rep.body)
		}
		if len(st.up.seen) != 0 {
			t.Errorf("the upstream was called: %v", st.up.seen)
		}
	}
	// Relayed where a target can hold it.
	rep := st.post(t, "/v1/responses", `{"model":"default","previous_response_id":"resp_123","input":"and then?"}`)
	if rep.status != 200 || rep.header.Get("X-Llmguard-Target") != "openai/gpt-4o" || st.up.last(t).path != "/v1/responses" {
		t.Errorf("%d %v %s", rep.status, rep.header, rep.body)
	}
	// Never to a translating target, even when the OpenAI one is down.
	st.up.reset()
	rep = st.post(t, "/v1/responses", `{"model":"oai-down","previous_response_id":"resp_123","input":"and then?"}`)
	if rep.status == 200 || !bytes.Contains(rep.body, []byte("would get it translated")) {
		t.Errorf("%d %s", rep.status, rep.body)
	}
	for _, e := range st.up.seen {
		if e.path != "/v1/responses" {
			t.Errorf("sent to %s", e.path)
		}
	}
}

// A failed target falls back through the engine, across dialects: the
// overloaded Anthropic target gives way to OpenAI, whose answer is relayed.
func TestResponsesFallback(t *testing.T) {
	st := newRsStack(t)
	rep := st.post(t, "/v1/responses", `{"model":"ant-down","input":"Say hello"}`)
	if rep.status != 200 || rep.header.Get("X-Llmguard-Target") != "openai/gpt-4o" || rep.header.Get("X-Llmguard-Fallbacks") != "1" {
		t.Fatalf("%d %v %s", rep.status, rep.header, rep.body)
	}
	if got := outputText(decodeRs(t, rep.body)); got != "Mock answer from gpt-4o: Say hello" {
		t.Errorf("%q", got)
	}
	// A request the provider rejects stays a 400 in OpenAI's shape.
	rep = st.post(t, "/v1/responses", `{"model":"openai/gpt-4o+fault=invalid_request","input":"hi"}`)
	if d, _, _ := errorDialect(t, rep.header.Get("Content-Type"), rep.body); rep.status != 400 || d != DialectOpenAI {
		t.Errorf("%d %s", rep.status, rep.body)
	}
	for _, body := range []string{`{"model":"ant"}`, `{"input":"x"}`, `{"model":"ant","input":[{"role":"robot","content":"x"}]}`, `[1]`} {
		rep = st.post(t, "/v1/responses", body)
		if _, _, msg := errorDialect(t, rep.header.Get("Content-Type"), rep.body); rep.status != 400 || msg == "" {
			t.Errorf("%s: %d %s", body, rep.status, rep.body)
		}
	}
}

// accumulate replays a Responses API event stream under the checks the
// official openai SDK's accumulator makes (it throws on any of them): the
// first event is response.created, sequence numbers count up from it, an
// item is added at the next output_index with an id (a function_call with
// a call_id), deltas name the item at their output_index and a content part
// that exists, .done events repeat what the deltas built. It returns the
// final response object and the event names.
func accumulate(t *testing.T, evs []event) (final map[string]any, names []string) {
	t.Helper()
	a := &accumulator{t: t}
	seq := -1.0
	for i, ev := range evs {
		m, ok := ev.Data.(map[string]any)
		if !ok {
			t.Fatalf("event %d %s: %v", i, ev.Name, ev.Data)
		}
		typ, _ := m["type"].(string)
		names = append(names, typ)
		if ev.Name != typ {
			t.Errorf("event %d: name %q, type %q", i, ev.Name, typ)
		}
		n, _ := m["sequence_number"].(float64)
		if i == 0 && typ != "response.created" && typ != "error" {
			t.Errorf("first event %s", typ)
		}
		if i > 0 && n != seq+1 {
			t.Errorf("event %d %s: sequence_number %v after %v", i, typ, n, seq)
		}
		seq = n
		a.i, a.typ, a.m, a.oi = i, typ, m, -1
		if f, ok := m["output_index"].(float64); ok {
			a.oi = int(f)
		}
		if f := a.apply(); f != nil {
			final = f
		}
	}
	return final, names
}

// accumulator is the snapshot accumulate builds, and the event at hand.
type accumulator struct {
	t      *testing.T
	output []map[string]any
	i, oi  int
	typ    string
	m      map[string]any
}

// item is the output item the event names, checked to be of type want.
func (a *accumulator) item(want string) map[string]any {
	if a.oi < 0 || a.oi >= len(a.output) {
		a.t.Fatalf("event %d %s: output_index %d of %d", a.i, a.typ, a.oi, len(a.output))
	}
	it := a.output[a.oi]
	if it["id"] != a.m["item_id"] || it["type"] != want {
		a.t.Fatalf("event %d %s: item_id %v type %v, want %v %s", a.i, a.typ, a.m["item_id"], it["type"], it["id"], want)
	}
	return it
}

// text is the content part the event names.
func (a *accumulator) text() map[string]any {
	c := a.item("message")["content"].([]any)
	ci := int(a.m["content_index"].(float64))
	if ci >= len(c) {
		a.t.Fatalf("event %d: no content part %d", a.i, ci)
	}
	return c[ci].(map[string]any)
}

// apply applies the event; it returns the final response object on
// response.completed or .incomplete.
func (a *accumulator) apply() map[string]any {
	m := a.m
	switch a.typ {
	case "response.output_item.added":
		it, _ := m["item"].(map[string]any)
		if a.oi != len(a.output) || it["id"] == "" || it["id"] == nil || (it["type"] == "function_call" && (it["call_id"] == "" || it["call_id"] == nil)) {
			a.t.Fatalf("event %d: bad item at %d: %v", a.i, a.oi, m)
		}
		if it["type"] == "message" {
			it["content"] = []any{}
		}
		a.output = append(a.output, it)
	case "response.content_part.added":
		it := a.item("message")
		c := it["content"].([]any)
		if int(m["content_index"].(float64)) != len(c) {
			a.t.Fatalf("event %d: content_index %v", a.i, m["content_index"])
		}
		it["content"] = append(c, m["part"])
	case "response.output_text.delta":
		p := a.text()
		p["text"] = p["text"].(string) + m["delta"].(string)
	case "response.output_text.done":
		if p := a.text(); p["text"] != m["text"] {
			a.t.Errorf("event %d: done text %q, deltas %q", a.i, m["text"], p["text"])
		}
	case "response.function_call_arguments.delta":
		it := a.item("function_call")
		it["arguments"] = it["arguments"].(string) + m["delta"].(string)
	case "response.function_call_arguments.done":
		if it := a.item("function_call"); it["arguments"] != m["arguments"] {
			a.t.Errorf("event %d: done arguments %q, deltas %q", a.i, m["arguments"], it["arguments"])
		}
	case "response.output_item.done":
		done, _ := m["item"].(map[string]any)
		if a.oi < 0 || a.oi >= len(a.output) || a.output[a.oi]["id"] != done["id"] {
			a.t.Fatalf("event %d: item.done %v", a.i, m)
		}
		a.output[a.oi] = done
	case "response.completed", "response.incomplete":
		final, _ := m["response"].(map[string]any)
		if out, _ := final["output"].([]any); len(out) != len(a.output) {
			a.t.Errorf("completed has %d items, the stream built %d", len(out), len(a.output))
		}
		return final
	}
	return nil
}

func (st *rsStack) stream(t *testing.T, body string) (reply, []event) {
	t.Helper()
	rep := st.post(t, "/v1/responses", body)
	if rep.status != 200 {
		t.Fatalf("%d %s", rep.status, rep.body)
	}
	if ct := rep.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("Content-Type %q", ct)
	}
	return rep, readEvents(t, bytes.NewReader(rep.body))
}

// A translated stream is the typed event stream OpenAI sends, and the SDK's
// accumulator builds the same answer from it as the final event says.
func TestResponsesStreamTranslated(t *testing.T) {
	st := newRsStack(t)
	for _, tt := range []struct{ route, model string }{{"ant", "claude-sonnet-4-5"}, {"gem", "gemini-2.5-flash"}, {"ds", "deepseek-chat"}} {
		t.Run(tt.route, func(t *testing.T) {
			_, evs := st.stream(t, `{"model":"`+tt.route+`","stream":true,"input":"Say hello to the streaming gateway"}`)
			final, names := accumulate(t, evs)
			want := "response.created response.in_progress response.output_item.added response.content_part.added response.output_text.delta"
			if got := strings.Join(names, " "); !strings.HasPrefix(got, want) ||
				!strings.HasSuffix(got, "response.output_text.done response.content_part.done response.output_item.done response.completed") {
				t.Errorf("events: %s", got)
			}
			if got := outputText(final); got != "Mock answer from "+tt.model+": Say hello to the streaming gateway" {
				t.Errorf("final text %q", got)
			}
			if final["status"] != "completed" || dig(final, "usage", "output_tokens").(float64) <= 0 || final["model"] != tt.model {
				t.Errorf("final: %v", final)
			}
		})
		t.Run(tt.route+" tool", func(t *testing.T) {
			_, evs := st.stream(t, `{"model":"`+tt.route+`","stream":true,"input":"weather?","tool_choice":{"type":"function","name":"get_weather"}`+rsTools+`}`)
			final, names := accumulate(t, evs)
			if !strings.Contains(strings.Join(names, " "), "response.function_call_arguments.delta") {
				t.Errorf("events: %v", names)
			}
			if dig(final, "output", 0, "type") != "function_call" || dig(final, "output", 0, "arguments") != `{"city":"mock"}` ||
				dig(final, "output", 0, "name") != "get_weather" {
				t.Errorf("final: %v", final["output"])
			}
		})
	}
}

// A relayed stream is OpenAI's own, event for event.
func TestResponsesStreamRelayed(t *testing.T) {
	st := newRsStack(t)
	rep, evs := st.stream(t, `{"model":"oai","stream":true,"input":"Say hello","tools":[]}`)
	if up := st.up.last(t); !bytes.Equal(rep.body, up.resp) {
		t.Errorf("client got\n%s\nupstream sent\n%s", rep.body, up.resp)
	}
	final, _ := accumulate(t, evs)
	if outputText(final) != "Mock answer from gpt-4o: Say hello" || rep.header.Get("X-Llmguard-Target") != "openai/gpt-4o" {
		t.Errorf("final %v", final)
	}
	// Fallback before the first token, then relayed.
	_, evs = st.stream(t, `{"model":"ant-down","stream":true,"input":"Say hello"}`)
	if final, _ := accumulate(t, evs); outputText(final) != "Mock answer from gpt-4o: Say hello" {
		t.Errorf("after fallback: %v", final)
	}
}

// A stream that breaks after tokens went out ends with an error event
// numbered after the last event sent, relayed or translated.
func TestResponsesStreamBroken(t *testing.T) {
	st := newRsStack(t)
	for _, route := range []string{"oai-mid", "ant-mid"} {
		t.Run(route, func(t *testing.T) {
			_, evs := st.stream(t, `{"model":"`+route+`","stream":true,"input":"one two three four five"}`)
			_, names := accumulate(t, evs)
			last, _ := evs[len(evs)-1].Data.(map[string]any)
			if names[len(names)-1] != "error" || last["message"] == "" || last["code"] == nil {
				t.Errorf("events %v; last %v", names, last)
			}
			for _, n := range names {
				if n == "response.completed" {
					t.Errorf("a broken stream completed: %v", names)
				}
			}
		})
	}
}
