package gateway

import (
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// check is one expectation on what a target's provider received: the JSON
// value at a path of the upstream body (want "" means absent), or a name
// in the response's x-llmguard-dropped header.
type check struct {
	path, want, dropped, url string
}

// at expects the upstream body's value at path (dot-separated keys and
// indexes) to equal the JSON text want ("" = absent).
func at(path, want string) check { return check{path: path, want: want} }

// dropped expects name in x-llmguard-dropped.
func dropped(name string) check { return check{dropped: name} }

// urlHas expects the upstream request's path to contain s.
func urlHas(s string) check { return check{url: s} }

// fidelityRow is one row of docs/fidelity.md's request tables: a field a
// client of one dialect sends, and what each target's provider gets.
type fidelityRow struct {
	field  string // as the row's first column names it
	client string // DialectOpenAI or DialectAnthropic
	body   string // the request's fields after "model" (messages included)
	ant    []check
	oai    []check
	gem    []check
}

const hi = `"messages":[{"role":"user","content":"hi"}]`

var oaToolJSON = `"tools":[{"type":"function","function":{"name":"get","description":"d","parameters":{"type":"object","properties":{"q":{"type":"string"}}}}}]`
var anToolJSON = `"tools":[{"name":"get","description":"d","input_schema":{"type":"object","properties":{"q":{"type":"string"}}}}]`

var oaToolTurns = `"messages":[{"role":"user","content":"hi"},
	{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get","arguments":"{\"q\":\"x\"}"}}]},
	{"role":"tool","tool_call_id":"call_1","content":"42"}],` + oaToolJSON
var anToolTurns = `"messages":[{"role":"user","content":"hi"},
	{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"get","input":{"q":"x"}}]},
	{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"42"}]}],` + anToolJSON

// fidelityRows are the request rows of docs/fidelity.md, each checked
// against an Anthropic, an OpenAI and a Gemini target over real HTTP.
var fidelityRows = []fidelityRow{
	// ---- OpenAI clients ----
	{field: "messages[].role system", client: DialectOpenAI,
		body: `"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}]`,
		ant:  []check{at("system", `"be brief"`)}, oai: []check{at("messages.0", `{"role":"system","content":"be brief"}`)},
		gem: []check{at("systemInstruction.parts.0.text", `"be brief"`)}},
	{field: "messages[].role developer", client: DialectOpenAI,
		body: `"messages":[{"role":"developer","content":"be brief"},{"role":"user","content":"hi"}]`,
		ant:  []check{at("system", `"be brief"`)}, oai: []check{at("messages.0.role", `"developer"`)},
		gem: []check{at("systemInstruction.parts.0.text", `"be brief"`)}},
	{field: "messages[].content text", client: DialectOpenAI,
		body: `"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]`,
		ant:  []check{at("messages.0.content.0.text", `"hi"`)}, oai: []check{at("messages.0.content.0.text", `"hi"`)},
		gem: []check{at("contents.0.parts.0.text", `"hi"`)}},
	{field: "messages[].content image_url", client: DialectOpenAI,
		body: `"messages":[{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]}]`,
		ant:  []check{at("messages.0.content.1.source", `{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}`)},
		oai:  []check{at("messages.0.content.1.image_url.url", `"data:image/png;base64,iVBORw0KGgo="`)},
		gem:  []check{at("contents.0.parts.1.inlineData", `{"mimeType":"image/png","data":"iVBORw0KGgo="}`)}},
	{field: "messages[].content image_url.detail", client: DialectOpenAI,
		body: `"messages":[{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"https://x.test/a.png","detail":"high"}}]}]`,
		ant:  []check{at("messages.0.content.1.source", `{"type":"url","url":"https://x.test/a.png"}`), dropped("messages[].content[].detail")},
		oai:  []check{at("messages.0.content.1.image_url.detail", `"high"`)},
		gem:  []check{at("contents.0.parts.1.fileData.fileUri", `"https://x.test/a.png"`), dropped("messages[].content[].detail")}},
	{field: "messages[].content input_audio", client: DialectOpenAI,
		body: `"messages":[{"role":"user","content":[{"type":"text","text":"listen"},{"type":"input_audio","input_audio":{"data":"AAAA","format":"wav"}}]}]`,
		ant:  []check{dropped("messages[].content[type=input_audio]")}, oai: []check{at("messages.0.content.1.type", `"input_audio"`)},
		gem: []check{dropped("messages[].content[type=input_audio]")}},
	{field: "messages[].tool_calls, role tool", client: DialectOpenAI, body: oaToolTurns,
		ant: []check{at("messages.1.content.0", `{"type":"tool_use","id":"call_1","name":"get","input":{"q":"x"}}`),
			at("messages.2.content.0", `{"type":"tool_result","tool_use_id":"call_1","content":"42"}`)},
		oai: []check{at("messages.1.tool_calls.0.id", `"call_1"`), at("messages.2.role", `"tool"`)},
		gem: []check{at("contents.1.parts.0.functionCall", `{"name":"get","args":{"q":"x"}}`),
			at("contents.2.parts.0.functionResponse", `{"name":"get","response":{"result":"42"}}`)}},
	{field: "messages[].name", client: DialectOpenAI, body: `"messages":[{"role":"user","content":"hi","name":"ann"}]`,
		ant: []check{dropped("messages[].name")}, oai: []check{at("messages.0.name", `"ann"`)}, gem: []check{dropped("messages[].name")}},
	{field: "max_tokens", client: DialectOpenAI, body: hi + `,"max_tokens":50`,
		ant: []check{at("max_tokens", `50`)}, oai: []check{at("max_completion_tokens", `50`), at("max_tokens", "")},
		gem: []check{at("generationConfig.maxOutputTokens", `50`)}},
	{field: "max_completion_tokens", client: DialectOpenAI, body: hi + `,"max_completion_tokens":50`,
		ant: []check{at("max_tokens", `50`)}, oai: []check{at("max_completion_tokens", `50`)},
		gem: []check{at("generationConfig.maxOutputTokens", `50`)}},
	{field: "temperature", client: DialectOpenAI, body: hi + `,"temperature":1.5`,
		ant: []check{at("temperature", `1`)}, oai: []check{at("temperature", `1.5`)}, gem: []check{at("generationConfig.temperature", `1.5`)}},
	{field: "top_p", client: DialectOpenAI, body: hi + `,"temperature":0.5,"top_p":0.9`,
		ant: []check{at("top_p", ""), dropped("top_p")}, oai: []check{at("top_p", `0.9`)}, gem: []check{at("generationConfig.topP", `0.9`)}},
	{field: "stop", client: DialectOpenAI, body: hi + `,"stop":["END"]`,
		ant: []check{at("stop_sequences", `["END"]`)}, oai: []check{at("stop", `["END"]`)}, gem: []check{at("generationConfig.stopSequences", `["END"]`)}},
	{field: "stream", client: DialectOpenAI, body: hi + `,"stream":true`,
		ant: []check{at("stream", `true`)}, oai: []check{at("stream", `true`), at("stream_options", `{"include_usage":true}`)},
		gem: []check{urlHas(":streamGenerateContent")}},
	{field: "tools", client: DialectOpenAI, body: hi + "," + oaToolJSON,
		ant: []check{at("tools.0", `{"name":"get","description":"d","input_schema":{"type":"object","properties":{"q":{"type":"string"}}}}`)},
		oai: []check{at("tools.0.function.name", `"get"`)},
		gem: []check{at("tools.0.functionDeclarations.0", `{"name":"get","description":"d","parametersJsonSchema":{"type":"object","properties":{"q":{"type":"string"}}}}`)}},
	{field: "tools[].function.strict", client: DialectOpenAI,
		body: hi + `,"tools":[{"type":"function","function":{"name":"get","parameters":{"type":"object"},"strict":true}}]`,
		ant:  []check{at("tools.0.name", `"get"`), dropped("tools[].function.strict")}, oai: []check{at("tools.0.function.strict", `true`)},
		gem: []check{dropped("tools[].function.strict")}},
	{field: "tool_choice", client: DialectOpenAI, body: hi + "," + oaToolJSON + `,"tool_choice":"required"`,
		ant: []check{at("tool_choice", `{"type":"any"}`)}, oai: []check{at("tool_choice", `"required"`)},
		gem: []check{at("toolConfig.functionCallingConfig", `{"mode":"ANY"}`)}},
	{field: "tool_choice function", client: DialectOpenAI, body: hi + "," + oaToolJSON + `,"tool_choice":{"type":"function","function":{"name":"get"}}`,
		ant: []check{at("tool_choice", `{"type":"tool","name":"get"}`)}, oai: []check{at("tool_choice.function.name", `"get"`)},
		gem: []check{at("toolConfig.functionCallingConfig", `{"mode":"ANY","allowedFunctionNames":["get"]}`)}},
	{field: "parallel_tool_calls", client: DialectOpenAI, body: hi + "," + oaToolJSON + `,"parallel_tool_calls":false`,
		ant: []check{at("tool_choice", `{"type":"auto","disable_parallel_tool_use":true}`)}, oai: []check{at("parallel_tool_calls", `false`)},
		gem: []check{dropped("parallel_tool_calls")}},
	{field: "response_format json_schema", client: DialectOpenAI,
		body: hi + `,"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object"},"strict":true}}`,
		ant:  []check{at("output_config", `{"format":{"type":"json_schema","schema":{"type":"object"}}}`)},
		oai:  []check{at("response_format.json_schema.name", `"x"`)},
		gem:  []check{at("generationConfig.responseMimeType", `"application/json"`), at("generationConfig.responseJsonSchema", `{"type":"object"}`)}},
	{field: "response_format json_object", client: DialectOpenAI, body: hi + `,"response_format":{"type":"json_object"}`,
		ant: []check{at("output_config", ""), dropped("response_format(json_object)")}, oai: []check{at("response_format", `{"type":"json_object"}`)},
		gem: []check{at("generationConfig.responseMimeType", `"application/json"`)}},
	{field: "seed", client: DialectOpenAI, body: hi + `,"seed":7`,
		ant: []check{dropped("seed")}, oai: []check{at("seed", `7`)}, gem: []check{at("generationConfig.seed", `7`)}},
	{field: "user", client: DialectOpenAI, body: hi + `,"user":"u-1"`,
		ant: []check{at("metadata", `{"user_id":"u-1"}`)}, oai: []check{at("user", `"u-1"`)}, gem: []check{dropped("user")}},
	{field: "metadata", client: DialectOpenAI, body: hi + `,"metadata":{"k":"v"},"store":true`,
		ant: []check{dropped("metadata.k")}, oai: []check{at("metadata", `{"k":"v"}`)}, gem: []check{dropped("metadata.k")}},
	{field: "other fields", client: DialectOpenAI, body: hi + `,"logprobs":true,"frequency_penalty":0.5,"n":1,"reasoning_effort":"low","service_tier":"flex"`,
		ant: []check{dropped("frequency_penalty"), dropped("logprobs"), dropped("n"), dropped("reasoning_effort"), dropped("service_tier")},
		oai: []check{at("logprobs", `true`), at("service_tier", `"flex"`)},
		gem: []check{dropped("frequency_penalty"), dropped("reasoning_effort")}},
	{field: "fallbacks, models", client: DialectOpenAI, body: hi + `,"fallbacks":["ant"],"models":["gem"]`,
		ant: []check{at("fallbacks", ""), at("models", "")}, oai: []check{at("fallbacks", ""), at("models", "")},
		gem: []check{at("fallbacks", ""), at("models", "")}},

	// ---- Anthropic clients ----
	{field: "system", client: DialectAnthropic, body: hi + `,"system":"be brief"`,
		ant: []check{at("system", `"be brief"`)}, oai: []check{at("messages.0", `{"role":"system","content":"be brief"}`)},
		gem: []check{at("systemInstruction.parts.0.text", `"be brief"`)}},
	{field: "system[].cache_control", client: DialectAnthropic,
		body: hi + `,"system":[{"type":"text","text":"be brief","cache_control":{"type":"ephemeral"}}]`,
		ant:  []check{at("system.0.cache_control", `{"type":"ephemeral"}`)},
		oai:  []check{at("messages.0.content", `"be brief"`), dropped("system[].cache_control")},
		gem:  []check{at("systemInstruction.parts.0.text", `"be brief"`), dropped("system[].cache_control")}},
	{field: "messages[].role system", client: DialectAnthropic,
		body: `"messages":[{"role":"user","content":"hi"},{"role":"system","content":"be brief"},{"role":"user","content":"again"}]`,
		ant:  []check{at("messages.1", `{"role":"system","content":"be brief"}`)},
		oai:  []check{at("messages.1", `{"role":"system","content":"be brief"}`)},
		gem:  []check{at("systemInstruction.parts.0.text", `"be brief"`), at("contents.0.parts.1.text", `"again"`)}},
	{field: "messages[] other fields", client: DialectAnthropic,
		body: `"messages":[{"role":"user","content":"hi"},{"role":"system","content":"be brief","clear_at":"next_user_message","output_config":{"effort":"low"}}]`,
		ant:  []check{at("messages.1.clear_at", `"next_user_message"`)},
		oai:  []check{dropped("messages[].clear_at"), dropped("messages[].output_config")},
		gem:  []check{dropped("messages[].clear_at")}},
	{field: "messages[].content[].cache_control", client: DialectAnthropic,
		body: `"messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}]`,
		ant:  []check{at("messages.0.content.0.cache_control", `{"type":"ephemeral"}`)},
		oai:  []check{at("messages.0.content", `"hi"`), dropped("messages[].content[].cache_control")},
		gem:  []check{dropped("messages[].content[].cache_control")}},
	{field: "messages[].content image", client: DialectAnthropic,
		body: `"messages":[{"role":"user","content":[{"type":"text","text":"look"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]}]`,
		ant:  []check{at("messages.0.content.1.source.data", `"iVBORw0KGgo="`)},
		oai:  []check{at("messages.0.content.1", `{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}`)},
		gem:  []check{at("contents.0.parts.1.inlineData", `{"mimeType":"image/png","data":"iVBORw0KGgo="}`)}},
	{field: "messages[].content tool_use, tool_result", client: DialectAnthropic, body: anToolTurns,
		ant: []check{at("messages.1.content.0.id", `"toolu_1"`)},
		oai: []check{at("messages.1.tool_calls.0", `{"id":"toolu_1","type":"function","function":{"name":"get","arguments":"{\"q\":\"x\"}"}}`),
			at("messages.2", `{"role":"tool","content":"42","tool_call_id":"toolu_1"}`)},
		gem: []check{at("contents.1.parts.0.functionCall.name", `"get"`), at("contents.2.parts.0.functionResponse.response", `{"result":"42"}`)}},
	{field: "messages[].content thinking", client: DialectAnthropic,
		body: `"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"sig"},{"type":"text","text":"hello"}]},{"role":"user","content":"again"}]`,
		ant:  []check{at("messages.1.content.0.signature", `"sig"`)},
		oai:  []check{at("messages.1", `{"role":"assistant","content":"hello"}`), dropped("messages[].content[type=thinking]")},
		gem:  []check{dropped("messages[].content[type=thinking]")}},
	{field: "messages[].content document, search_result, server tool blocks", client: DialectAnthropic,
		body: `"messages":[{"role":"user","content":[{"type":"text","text":"read"},{"type":"document","source":{"type":"text","media_type":"text/plain","data":"d"}},{"type":"search_result","source":"s","title":"t","content":[{"type":"text","text":"x"}]}]}]`,
		ant:  []check{at("messages.0.content.1.type", `"document"`), at("messages.0.content.2.type", `"search_result"`)},
		oai:  []check{dropped("messages[].content[type=document]"), dropped("messages[].content[type=search_result]")},
		gem:  []check{dropped("messages[].content[type=document]")}},
	{field: "max_tokens", client: DialectAnthropic, body: hi + `,"max_tokens":50`,
		ant: []check{at("max_tokens", `50`)}, oai: []check{at("max_completion_tokens", `50`)}, gem: []check{at("generationConfig.maxOutputTokens", `50`)}},
	{field: "temperature, top_p", client: DialectAnthropic, body: hi + `,"temperature":0.5,"top_p":0.9`,
		ant: []check{at("top_p", `0.9`)}, oai: []check{at("temperature", `0.5`), at("top_p", `0.9`)},
		gem: []check{at("generationConfig.temperature", `0.5`), at("generationConfig.topP", `0.9`)}},
	{field: "top_k", client: DialectAnthropic, body: hi + `,"top_k":5`,
		ant: []check{at("top_k", `5`)}, oai: []check{dropped("top_k")}, gem: []check{at("generationConfig.topK", `5`)}},
	{field: "stop_sequences", client: DialectAnthropic, body: hi + `,"stop_sequences":["END"]`,
		ant: []check{at("stop_sequences", `["END"]`)}, oai: []check{at("stop", `["END"]`)}, gem: []check{at("generationConfig.stopSequences", `["END"]`)}},
	{field: "stream", client: DialectAnthropic, body: hi + `,"stream":true`,
		ant: []check{at("stream", `true`)}, oai: []check{at("stream", `true`)}, gem: []check{urlHas(":streamGenerateContent")}},
	{field: "metadata.user_id", client: DialectAnthropic, body: hi + `,"metadata":{"user_id":"u-1"}`,
		ant: []check{at("metadata", `{"user_id":"u-1"}`)}, oai: []check{at("metadata", ""), dropped("metadata.user_id")},
		gem: []check{dropped("metadata.user_id")}},
	{field: "tools", client: DialectAnthropic, body: hi + "," + anToolJSON,
		ant: []check{at("tools.0.name", `"get"`)},
		oai: []check{at("tools.0", `{"type":"function","function":{"name":"get","description":"d","parameters":{"type":"object","properties":{"q":{"type":"string"}}}}}`)},
		gem: []check{at("tools.0.functionDeclarations.0.name", `"get"`)}},
	{field: "tools[] server tools", client: DialectAnthropic, body: hi + `,"tools":[{"type":"web_search_20250305","name":"web_search","max_uses":3}]`,
		ant: []check{at("tools.0.type", `"web_search_20250305"`)}, oai: []check{at("tools", ""), dropped("tools[type=web_search_20250305]")},
		gem: []check{dropped("tools[type=web_search_20250305]")}},
	{field: "tools[].cache_control, defer_loading", client: DialectAnthropic,
		body: hi + `,"tools":[{"name":"get","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"},"defer_loading":true}]`,
		ant:  []check{at("tools.0.defer_loading", `true`)}, oai: []check{dropped("tools[].cache_control"), dropped("tools[].defer_loading")},
		gem: []check{dropped("tools[].cache_control")}},
	{field: "tool_choice", client: DialectAnthropic, body: hi + "," + anToolJSON + `,"tool_choice":{"type":"any"}`,
		ant: []check{at("tool_choice", `{"type":"any"}`)}, oai: []check{at("tool_choice", `"required"`)},
		gem: []check{at("toolConfig.functionCallingConfig.mode", `"ANY"`)}},
	{field: "tool_choice.disable_parallel_tool_use", client: DialectAnthropic,
		body: hi + "," + anToolJSON + `,"tool_choice":{"type":"auto","disable_parallel_tool_use":true}`,
		ant:  []check{at("tool_choice.disable_parallel_tool_use", `true`)}, oai: []check{at("parallel_tool_calls", `false`)},
		gem: []check{dropped("tool_choice.disable_parallel_tool_use")}},
	{field: "output_config.format", client: DialectAnthropic,
		body: hi + `,"output_config":{"format":{"type":"json_schema","schema":{"type":"object"}}}`,
		ant:  []check{at("output_config.format.type", `"json_schema"`)},
		oai:  []check{at("response_format", `{"type":"json_schema","json_schema":{"name":"response","schema":{"type":"object"}}}`)},
		gem:  []check{at("generationConfig.responseJsonSchema", `{"type":"object"}`)}},
	{field: "output_config.effort", client: DialectAnthropic, body: hi + `,"output_config":{"effort":"low"}`,
		ant: []check{at("output_config", `{"effort":"low"}`)}, oai: []check{dropped("output_config.effort")},
		gem: []check{dropped("output_config.effort")}},
	{field: "thinking", client: DialectAnthropic, body: hi + `,"thinking":{"type":"enabled","budget_tokens":1024}`,
		ant: []check{at("thinking.budget_tokens", `1024`)}, oai: []check{dropped("thinking")}, gem: []check{dropped("thinking")}},
	{field: "other fields", client: DialectAnthropic,
		body: hi + `,"context_management":{"edits":[]},"service_tier":"auto","container":"c","inference_geo":"us","speed":"fast","cache_control":{"type":"ephemeral"}`,
		ant:  []check{at("context_management", `{"edits":[]}`), at("speed", `"fast"`)},
		oai:  []check{dropped("context_management"), dropped("service_tier"), dropped("container"), dropped("inference_geo"), dropped("speed"), dropped("cache_control")},
		gem:  []check{dropped("context_management"), dropped("speed")}},
	{field: "fallbacks (server-side)", client: DialectAnthropic, body: hi + `,"fallbacks":[{"model":"claude-opus-4-5"}]`,
		ant: []check{at("fallbacks", `[{"model":"claude-opus-4-5"}]`)}, oai: []check{dropped("fallbacks")}, gem: []check{dropped("fallbacks")}},
	{field: "anthropic-beta header", client: DialectAnthropic, body: hi,
		oai: []check{dropped("anthropic-beta (header)")}, gem: []check{dropped("anthropic-beta (header)")}},
}

// TestFidelity sends each row's request to a target of each dialect and
// checks what the provider received and what the gateway said it dropped.
func TestFidelity(t *testing.T) {
	s := newRecStack(t, nil)
	for _, row := range fidelityRows {
		for _, target := range []struct {
			route   string
			checks  []check
			dialect string
		}{{"ant", row.ant, DialectAnthropic}, {"oai", row.oai, DialectOpenAI}, {"gem", row.gem, "gemini"}} {
			t.Run(row.client+"/"+row.field+"/"+target.route, func(t *testing.T) {
				path, extra := "/v1/chat/completions", ""
				if row.client == DialectAnthropic {
					path = "/v1/messages"
					if !strings.Contains(row.body, `"max_tokens"`) {
						extra = `,"max_tokens":64`
					}
				}
				body := `{"model":"` + target.route + `",` + row.body + extra + `}`
				r := s.post(t, path, body, "Anthropic-Beta", "interleaved-thinking-2025-05-14")
				if r.status != 200 {
					t.Fatalf("status %d: %s", r.status, r.body)
				}
				up := s.upstream(t)
				upPath := s.rec.last(t).path
				gotDropped := r.header.Get("X-Llmguard-Dropped")
				if target.dialect == row.client && gotDropped != "" {
					t.Errorf("same dialect: x-llmguard-dropped = %q, want nothing", gotDropped)
				}
				for _, c := range target.checks {
					switch {
					case c.dropped != "":
						if !slicesContains(strings.Split(gotDropped, ", "), c.dropped) {
							t.Errorf("x-llmguard-dropped = %q, want %q named", gotDropped, c.dropped)
						}
					case c.url != "":
						if !strings.Contains(upPath, c.url) {
							t.Errorf("upstream path %s, want %s in it", upPath, c.url)
						}
					default:
						got := walk(up, c.path)
						if c.want == "" {
							if got != nil {
								t.Errorf("upstream %s = %v, want it absent", c.path, got)
							}
							continue
						}
						if d := cmp.Diff(jsonOf(t, c.want), got); d != "" {
							t.Errorf("upstream %s (-want +got):\n%s", c.path, d)
						}
					}
				}
			})
		}
	}
}

func slicesContains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// walk follows a dot-separated path of keys and indexes.
func walk(v any, path string) any {
	for _, p := range strings.Split(path, ".") {
		if i, err := strconv.Atoi(p); err == nil {
			v = dig(v, i)
		} else {
			v = dig(v, p)
		}
	}
	return v
}

// TestFidelityDoc keeps docs/fidelity.md and the tests in step: every row
// of its tables names a test that exists, and every request row tested
// here has its row in the doc.
func TestFidelityDoc(t *testing.T) {
	doc, err := os.ReadFile("../docs/fidelity.md")
	if err != nil {
		t.Fatal(err)
	}
	var src strings.Builder
	files, _ := os.ReadDir(".")
	for _, f := range files {
		if strings.HasSuffix(f.Name(), "_test.go") {
			b, _ := os.ReadFile(f.Name())
			src.Write(b)
		}
	}
	tested := map[string]bool{}
	for _, r := range fidelityRows {
		tested[r.client+" "+r.field] = true
	}
	row := regexp.MustCompile("^\\| (openai|anthropic|both|gemini) \\| `([^`]+)` \\|.*\\| `(Test\\w+)` \\|$")
	section, rows := "", 0
	inDoc := map[string]bool{}
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, "## ") {
			section = line
		}
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		rows++
		if !strings.Contains(src.String(), "func "+m[3]+"(") {
			t.Errorf("docs/fidelity.md row %q names %s, which does not exist", m[2], m[3])
		}
		if m[3] == "TestFidelity" {
			inDoc[m[1]+" "+m[2]] = true
			if !tested[m[1]+" "+m[2]] {
				t.Errorf("docs/fidelity.md (%s) row %s %q has no fidelityRows entry", section, m[1], m[2])
			}
		}
	}
	for k := range tested {
		if !inDoc[k] {
			t.Errorf("fidelityRows has %q, which docs/fidelity.md lacks", k)
		}
	}
	if rows < len(fidelityRows) {
		t.Errorf("docs/fidelity.md has %d rows, fewer than the %d tested", rows, len(fidelityRows))
	}
	_ = json.Valid
}
