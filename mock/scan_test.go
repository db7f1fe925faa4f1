package mock

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var fastSeeds = []string{
	`{"model":"gpt-4.1","messages":[{"role":"user","content":"What is the capital of France?"}]}`,
	`{"model":"c","max_tokens":256,"stream":true,"messages":[{"role":"user","content":"hi \"there\" \u00e9\n"},{"role":"assistant","content":"x"}],"temperature":0.7,"metadata":{"user_id":"u"}}`,
	`{"model":"g","messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}],"stream":true,"stream_options":{"include_usage":true}}`,
	`{"model":"g","messages":[{"role":"user","content":"call get_weather"},{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"sunny"}],"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}],"tool_choice":"auto"}`,
	`{"model":"c","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"r"}]}]}],"tools":[{"name":"t","input_schema":{}}],"tool_choice":{"type":"tool","name":"t"}}`,
	` {"Model":"x","messages":[]} `, `{"model":"x","stream":"yes"}`, `{"model":1}`, `{"model":"m","messages":[null,{"role":null,"content":null}]}`,
	`{"model":"m","n":-0.5e+3,"x":[true,false,null,{}],"messages":[]}`, `{"model":"m",}`, `{"model":"m"}x`, `[]`, `null`, `{"a":01}`, `{"a":"\x01"}`,
}

// TestFastPathTaken: ordinary requests never need encoding/json's
// reflection for the hot fields.
func TestFastPathTaken(t *testing.T) {
	for i, s := range fastSeeds[:5] {
		for _, anth := range []bool{false, true} {
			if (i == 3 && anth) || (i == 4 && !anth) {
				continue // the other dialect's tool_choice
			}
			if _, ok := fastChat([]byte(s), anth); !ok {
				t.Errorf("seed %d (anthropic %v) fell back to the slow parser", i, anth)
			}
		}
	}
}

// FuzzFastParse: whenever the fast parser accepts a body, encoding/json
// accepts it too and both read the same request.
func FuzzFastParse(f *testing.F) {
	for _, s := range fastSeeds {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, anthropic bool) {
		fast, ok := fastChat(body, anthropic)
		var slow *chat
		var err error
		if anthropic {
			slow, err = parseAnthropic(body)
		} else {
			slow, err = parseOpenAI(body)
		}
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("fast accepted what encoding/json rejects (%v): %q", err, body)
		}
		if diff := cmp.Diff(slow, fast, cmp.AllowUnexported(chat{}, tool{}), cmp.Comparer(func(a, b json.RawMessage) bool {
			return string(a) == string(b)
		})); diff != "" {
			t.Fatalf("%q (-slow +fast):\n%s", body, diff)
		}
	})
}

var geminiSeeds = []string{
	`{"contents":[{"role":"user","parts":[{"text":"What is"},{"text":"the capital?"}]}]}`,
	`{"contents":[{"role":"user","parts":[{"text":"a"}]},{"role":"model","parts":[{"text":"b"}]}],"systemInstruction":{"parts":[{"text":"s"}]},"generationConfig":{"temperature":0.5}}`,
	`{"contents":[{"parts":[{"text":"use f"}]}],"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":"OBJECT"}}]}],"toolConfig":{"functionCallingConfig":{"mode":"ANY"}}}`,
	`{"contents":[{"parts":[{"functionResponse":{"name":"f","response":{"result":"r"}}}]}]}`,
	`{"Contents":[]}`, `{"contents":[null,{"parts":null}],"tool_config":null}`, `{"contents":[{"parts":[{"text":5}]}]}`,
}

func TestFastGeminiTaken(t *testing.T) {
	for i, s := range geminiSeeds[:3] {
		if _, ok := fastGemini([]byte(s), "m", false); !ok {
			t.Errorf("seed %d fell back to the slow parser", i)
		}
	}
}

func FuzzFastGemini(f *testing.F) {
	for _, s := range geminiSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fast, ok := fastGemini(body, "m", true)
		slow, err := parseGemini(body, "m", true)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("fast accepted what encoding/json rejects (%v): %q", err, body)
		}
		if diff := cmp.Diff(slow, fast, cmp.AllowUnexported(chat{}, tool{}), cmp.Comparer(func(a, b json.RawMessage) bool {
			return string(a) == string(b)
		})); diff != "" {
			t.Fatalf("%q (-slow +fast):\n%s", body, diff)
		}
	})
}
