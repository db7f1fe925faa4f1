package mock

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestToolArgs(t *testing.T) {
	tests := []struct {
		name, schema, want string
	}{
		{"required only", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["b"]}`, `{"b":1}`},
		{"all when none required", `{"properties":{"a":{"type":"boolean"},"b":{"type":"array"},"c":{"type":"object"},"d":{"type":"number"}}}`, `{"a":true,"b":[],"c":{},"d":1}`},
		{"enum and type list", `{"properties":{"u":{"type":"string","enum":["celsius","fahrenheit"]},"n":{"type":["null","integer"]}}}`, `{"n":1,"u":"celsius"}`},
		{"gemini upper case", `{"type":"OBJECT","properties":{"x":{"type":"INTEGER"}},"required":["x"]}`, `{"x":1}`},
		{"no schema", ``, `{}`},
		{"no properties", `{"type":"object"}`, `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(toolArgs(&tool{name: "t", params: json.RawMessage(tt.schema)})); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestPickTool(t *testing.T) {
	tools := []tool{{name: "get_weather"}, {name: "lookup_order"}}
	tests := []struct {
		name string
		c    chat
		want string
	}{
		{"named in text", chat{text: "please LOOKUP_ORDER 42", tools: tools}, "lookup_order"},
		{"forced", chat{text: "hi", tools: tools, force: "lookup_order"}, "lookup_order"},
		{"forced unknown falls back to first", chat{text: "hi", tools: tools, force: "nope"}, "get_weather"},
		{"any", chat{text: "hi", tools: tools, force: "*"}, "get_weather"},
		{"none forbids", chat{text: "get_weather", tools: tools, noTools: true}, ""},
		{"tool result answers", chat{text: "get_weather", tools: tools, toolResult: true, force: "*"}, ""},
		{"no tools", chat{text: "get_weather"}, ""},
		{"not mentioned", chat{text: "hello", tools: tools}, ""},
		{"part of a word", chat{text: "my get_weathers and xlookup_order", tools: tools}, ""},
		{"named after a part", chat{text: "get_weathers, then get_weather.", tools: tools}, "get_weather"},
		{"only in a system reminder", chat{text: "<system-reminder>Tools: get_weather, lookup_order</system-reminder> hello", tools: tools}, ""},
		{"unclosed system reminder", chat{text: "hello <system-reminder>get_weather", tools: tools}, ""},
		{"named beside a reminder", chat{text: "<system-reminder>get_weather</system-reminder>call lookup_order", tools: tools}, "lookup_order"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if tl := tt.c.pickTool(); tl != nil {
				got = tl.name
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseDialects(t *testing.T) {
	a, err := parseAnthropic([]byte(`{"model":"c","messages":[{"role":"user","content":[{"type":"text","text":"one"},{"type":"image","source":{}},{"type":"text","text":"two"}]},{"role":"assistant","content":"x"}],"tool_choice":{"type":"none"}}`))
	if err != nil || a.text != "one two" || !a.noTools || a.model != "c" {
		t.Errorf("anthropic: %+v %v", a, err)
	}
	o, err := parseOpenAI([]byte(`{"model":"g","messages":[{"role":"system","content":"sys"},{"role":"user","content":[{"type":"text","text":"hello"}]}],"tool_choice":"none","stream":true,"stream_options":{"include_usage":true}}`))
	if err != nil || o.text != "hello" || !o.noTools || !o.stream || !o.includeUsage {
		t.Errorf("openai: %+v %v", o, err)
	}
	g, err := parseGemini([]byte(`{"contents":[{"role":"user","parts":[{"text":"hi"},{"function_response":{"name":"f","response":{"output":"42"}}}]}],"tools":[{"function_declarations":[{"name":"f"}]}],"tool_config":{"function_calling_config":{"mode":"NONE"}}}`), "m", false)
	want := &chat{model: "m", text: "hi 42", toolResult: true, tools: []tool{{name: "f"}}, noTools: true, inputTokens: g.inputTokens}
	if err != nil || !cmp.Equal(want, g, cmp.AllowUnexported(chat{}, tool{})) {
		t.Errorf("gemini: %+v %v", g, err)
	}
	if got := geminiResponseText([]byte(`{"name":"f","response":{"temp":3}}`)); got != `{"temp":3}` {
		t.Errorf("geminiResponseText: %s", got)
	}
}

func TestServerScenarioDefault(t *testing.T) {
	if got := New(nil).Scenario().Name; got != "healthy" {
		t.Errorf("nil scenario is %q", got)
	}
}
