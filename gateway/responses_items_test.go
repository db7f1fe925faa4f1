package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/llmguard/llmguard/state/memstore"
)

// assistantTurns is what an upstream request carries as the assistant's
// earlier turns, in order, each as "text:…" or "call:NAME ARGS", read in
// the upstream's dialect (by its path).
func assistantTurns(t *testing.T, up seenExchange) []string {
	t.Helper()
	var body map[string]any
	if err := json.Unmarshal(up.req, &body); err != nil {
		t.Fatalf("upstream body: %v\n%s", err, up.req)
	}
	var out []string
	args := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	switch {
	case up.path == "/v1/messages":
		for _, m := range body["messages"].([]any) {
			if dig(m, "role") != "assistant" {
				continue
			}
			for _, p := range dig(m, "content").([]any) {
				switch dig(p, "type") {
				case "text":
					out = append(out, "text:"+dig(p, "text").(string))
				case "tool_use":
					out = append(out, "call:"+dig(p, "name").(string)+" "+args(dig(p, "input")))
				}
			}
		}
	case strings.HasPrefix(up.path, "/v1beta/models/"):
		for _, c := range body["contents"].([]any) {
			if dig(c, "role") != "model" {
				continue
			}
			for _, p := range dig(c, "parts").([]any) {
				if s, ok := dig(p, "text").(string); ok {
					out = append(out, "text:"+s)
				} else if fc := dig(p, "functionCall"); fc != nil {
					out = append(out, "call:"+dig(fc, "name").(string)+" "+args(dig(fc, "args")))
				}
			}
		}
	default: // Chat Completions
		for _, m := range body["messages"].([]any) {
			if dig(m, "role") != "assistant" {
				continue
			}
			if s, ok := dig(m, "content").(string); ok && s != "" {
				out = append(out, "text:"+s)
			}
			calls, _ := dig(m, "tool_calls").([]any)
			for _, c := range calls {
				var a any
				_ = json.Unmarshal([]byte(dig(c, "function", "arguments").(string)), &a)
				out = append(out, "call:"+dig(c, "function", "name").(string)+" "+args(a))
			}
		}
	}
	return out
}

// firstItem is the id, and for a function call the call_id, of the first
// output item of type typ in a response object.
func firstItem(t *testing.T, m map[string]any, typ string) (id, callID string) {
	t.Helper()
	for _, it := range m["output"].([]any) {
		if dig(it, "type") == typ {
			id, _ = dig(it, "id").(string)
			callID, _ = dig(it, "call_id").(string)
			return id, callID
		}
	}
	t.Fatalf("no %s item in %v", typ, m["output"])
	return "", ""
}

// The Vercel AI SDK's default provider (store: true) sends its earlier
// answers as item_reference items: on every translated target, the second
// turn reaches the upstream with the first answer's text (and a function
// call's name and arguments) as the assistant's turn, whether the first
// turn was a stream or not.
func TestResponsesItemReference(t *testing.T) {
	st := newRsStack(t)
	for _, tt := range []struct{ route, model string }{
		{"ant", "claude-sonnet-4-5"}, {"gem", "gemini-2.5-flash"}, {"ds", "deepseek-chat"},
	} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s stream=%v", tt.route, stream), func(t *testing.T) {
				first := func(body string) map[string]any {
					t.Helper()
					if !stream {
						rep := st.post(t, "/v1/responses", body)
						if rep.status != 200 {
							t.Fatalf("%d %s", rep.status, rep.body)
						}
						return decodeRs(t, rep.body)
					}
					_, evs := st.stream(t, strings.Replace(body, "{", `{"stream":true,`, 1))
					final, _ := accumulate(t, evs)
					return final
				}
				m := first(`{"model":"` + tt.route + `","input":"Say hello to the gateway"}`)
				if m["store"] != true {
					t.Errorf("store %v", m["store"])
				}
				msg, _ := firstItem(t, m, "message")
				text := outputText(m)
				rep := st.post(t, "/v1/responses", `{"model":"`+tt.route+`","input":[{"role":"user","content":"Say hello to the gateway"},`+
					`{"type":"item_reference","id":"`+msg+`"},{"role":"user","content":"Now say goodbye"}]}`)
				if rep.status != 200 {
					t.Fatalf("second turn: %d %s", rep.status, rep.body)
				}
				if got := outputText(decodeRs(t, rep.body)); got != "Mock answer from "+tt.model+": Now say goodbye" {
					t.Errorf("second turn: %q", got)
				}
				if got := assistantTurns(t, st.up.last(t)); len(got) != 1 || got[0] != "text:"+text {
					t.Errorf("upstream's assistant turns %q, want the first answer %q", got, text)
				}

				// A function call, then its output, then a follow-up.
				m = first(`{"model":"` + tt.route + `","input":"What is the weather in Paris?","tool_choice":"required"` + rsTools + `}`)
				fc, callID := firstItem(t, m, "function_call")
				rep = st.post(t, "/v1/responses", `{"model":"`+tt.route+`","input":[{"role":"user","content":"What is the weather in Paris?"},`+
					`{"type":"item_reference","id":"`+fc+`"},{"type":"function_call_output","call_id":"`+callID+`","output":"sunny, 21 C"}]`+rsTools+`}`)
				if rep.status != 200 {
					t.Fatalf("after the call: %d %s", rep.status, rep.body)
				}
				m = decodeRs(t, rep.body)
				if got := outputText(m); !strings.Contains(got, "the tool returned: sunny, 21 C") {
					t.Errorf("after the tool result: %q", got)
				}
				if got := assistantTurns(t, st.up.last(t)); len(got) != 1 || got[0] != `call:get_weather {"city":"mock"}` {
					t.Errorf("upstream's assistant turns %q", got)
				}
				msg2, _ := firstItem(t, m, "message")
				rep = st.post(t, "/v1/responses", `{"model":"`+tt.route+`","input":[{"role":"user","content":"What is the weather in Paris?"},`+
					`{"type":"item_reference","id":"`+fc+`"},{"type":"function_call_output","call_id":"`+callID+`","output":"sunny, 21 C"},`+
					`{"type":"item_reference","id":"`+msg2+`"},{"role":"user","content":"Thanks"}]`+rsTools+`}`)
				if rep.status != 200 || outputText(decodeRs(t, rep.body)) != "Mock answer from "+tt.model+": Thanks" {
					t.Fatalf("third turn: %d %s", rep.status, rep.body)
				}
				if got := assistantTurns(t, st.up.last(t)); len(got) != 2 || got[1] != "text:"+outputText(m) {
					t.Errorf("upstream's assistant turns %q", got)
				}
			})
		}
	}
}

// A reference the gateway resolved goes to an OpenAI target as the item's
// content (OpenAI never saw the gateway's ids): the fallback from an
// overloaded Anthropic target gets no item_reference. One it does not hold
// goes to OpenAI as it is; an OpenAI answer's items are OpenAI's to keep.
func TestResponsesItemReferenceRelayed(t *testing.T) {
	st := newRsStack(t)
	m := decodeRs(t, st.post(t, "/v1/responses", `{"model":"ant","input":"Say hello"}`).body)
	msg, _ := firstItem(t, m, "message")
	st.up.reset()
	rep := st.post(t, "/v1/responses", `{"model":"ant-down","input":[{"role":"user","content":"Say hello"},{"type":"item_reference","id":"`+msg+`"},`+
		`{"type":"item_reference","id":"msg_openai_own"},{"role":"user","content":"more"}]}`)
	up := st.up.last(t)
	if rep.status != 200 || rep.header.Get("X-Llmguard-Target") != "openai/gpt-4o" || up.path != "/v1/responses" {
		t.Fatalf("%d %v %s", rep.status, rep.header, rep.body)
	}
	var body struct{ Input []json.RawMessage }
	if err := json.Unmarshal(up.req, &body); err != nil {
		t.Fatal(err)
	}
	want := `{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Mock answer from claude-sonnet-4-5: Say hello"}]}`
	if len(body.Input) != 4 || string(body.Input[1]) != want || string(body.Input[2]) != `{"type":"item_reference","id":"msg_openai_own"}` {
		t.Errorf("OpenAI got input %s", up.req)
	}
	// The relayed answer's items are not kept: on a translating route a
	// reference to one is refused.
	oai := decodeRs(t, st.post(t, "/v1/responses", `{"model":"oai","input":"Say hello"}`).body)
	id, _ := firstItem(t, oai, "message")
	rep = st.post(t, "/v1/responses", `{"model":"ant","input":[{"type":"item_reference","id":"`+id+`"},{"role":"user","content":"more"}]}`)
	if rep.status != 400 || !bytes.Contains(rep.body, []byte("holds no item with this id")) {
		t.Errorf("%d %s", rep.status, rep.body)
	}
}

// With gateway keys, items are scoped to the key that made them: another
// key's reference to the same id is refused as unknown. "store": false
// keeps nothing, and the response says so.
func TestResponsesItemScope(t *testing.T) {
	st := newUpStackOpts(t, rsConfig, &Options{Keys: []string{"gw-key-one", "gw-key-two"}})
	one, two := []string{"Authorization", "Bearer gw-key-one"}, []string{"x-api-key", "gw-key-two"}
	rep := st.post(t, "/v1/responses", `{"model":"ant","input":"Say hello"}`, one...)
	msg, _ := firstItem(t, decodeRs(t, rep.body), "message")
	next := `{"model":"ant","input":[{"role":"user","content":"Say hello"},{"type":"item_reference","id":"` + msg + `"},{"role":"user","content":"more"}]}`
	if rep := st.post(t, "/v1/responses", next, two...); rep.status != 400 || !bytes.Contains(rep.body, []byte(`item_reference \"`+msg+`\"`)) {
		t.Errorf("another key's reference: %d %s", rep.status, rep.body)
	}
	if rep := st.post(t, "/v1/responses", next, "x-api-key", "gw-key-one"); rep.status != 200 {
		t.Errorf("the same key (sent as x-api-key): %d %s", rep.status, rep.body)
	}

	rep = st.post(t, "/v1/responses", `{"model":"ant","input":"Say hello","store":false}`, one...)
	m := decodeRs(t, rep.body)
	msg, _ = firstItem(t, m, "message")
	if m["store"] != false {
		t.Errorf("store %v", m["store"])
	}
	next = `{"model":"ant","input":[{"type":"item_reference","id":"` + msg + `"},{"role":"user","content":"more"}]}`
	if rep := st.post(t, "/v1/responses", next, one...); rep.status != 400 {
		t.Errorf("a store:false answer was kept: %d %s", rep.status, rep.body)
	}
}

// Nothing a client sends grows memory without bound: many answers leave
// the item store within its bounds (the oldest items then refused in one
// line), and one kept answer referenced again and again can't make a
// request larger than the body limit (413).
func TestResponsesItemsBounded(t *testing.T) {
	items := memstore.NewItems(&memstore.ItemOptions{MaxItems: 20, MaxBytes: 16 << 10})
	st := newUpStackOpts(t, rsConfig, &Options{Items: items, MaxBodyBytes: 8 << 10})
	var first string
	for i := range 200 {
		rep := st.post(t, "/v1/responses", fmt.Sprintf(`{"model":"ant","input":"Say hello number %d"}`, i))
		id, _ := firstItem(t, decodeRs(t, rep.body), "message")
		if i == 0 {
			first = id
		}
	}
	if n, b := items.Size(); n > 20 || b > 16<<10 || n == 0 {
		t.Errorf("after 200 answers the store holds %d items, %d bytes (bounds 20, %d)", n, b, 16<<10)
	}
	rep := st.post(t, "/v1/responses", `{"model":"ant","input":[{"type":"item_reference","id":"`+first+`"},{"role":"user","content":"more"}]}`)
	if rep.status != 400 || !bytes.Contains(rep.body, []byte("holds no item with this id")) {
		t.Errorf("an evicted item: %d %s", rep.status, rep.body)
	}

	// The last answer is kept; 100 references to it (4 KiB) would expand
	// past the 8 KiB limit.
	m := decodeRs(t, st.post(t, "/v1/responses", `{"model":"ant","input":"Say hello to the gateway at length"}`).body)
	msg, _ := firstItem(t, m, "message")
	ref := `{"type":"item_reference","id":"` + msg + `"}`
	body := `{"model":"ant","input":[` + strings.Repeat(ref+",", 100) + `{"role":"user","content":"more"}]}`
	if len(body) >= 8<<10 {
		t.Fatalf("the test body is %d bytes", len(body))
	}
	if rep := st.post(t, "/v1/responses", body); rep.status != 413 {
		t.Errorf("100 references: %d %s", rep.status, rep.body)
	}
	if rep := st.post(t, "/v1/responses", `{"model":"ant","input":[`+strings.Repeat(ref+",", 3)+`{"role":"user","content":"more"}]}`); rep.status != 200 {
		t.Errorf("3 references: %d %s", rep.status, rep.body)
	}
}
