package gateway

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/llmguard/llmguard/provider/openai"
)

// checkLean: an Anthropic body decoded as the gateway decodes it for a
// target of another dialect (decodeChat, then the request's Lean, its
// texts left in the client's body) gets the 400 the whole decoder gives,
// or an OpenAI body that says what the whole decoding's does, and a Full
// that is the whole decoding.
func checkLean(t *testing.T, body []byte) {
	t.Helper()
	want, werr := decodeAnthropic(body)
	in, err := decodeChat(DialectAnthropic, body, nil)
	if err == nil {
		_, err = in.req.Lean()
	}
	if werr != nil || err != nil {
		if werr == nil || err == nil || err.Error() != werr.Error() {
			t.Fatalf("%s: lean decoding: %v, whole decoding: %v", body, err, werr)
		}
		return
	}
	wantBody, werr := openai.Encode(want.req, "gpt-4o", true)
	got, err := openai.Encode(in.req, "gpt-4o", true)
	if (err == nil) != (werr == nil) {
		t.Fatalf("%s: encoding: %v, want %v", body, err, werr)
	}
	if err != nil {
		return
	}
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: encoded %s: %v", body, got, err)
	}
	if err := json.Unmarshal(wantBody, &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("%s: encoded\n%s\nwant\n%s", body, got, wantBody)
	}
	if fb, wb := fullJSON(t, in.req, want.req); fb != wb {
		t.Fatalf("%s: Full\n%s\nwant\n%s", body, fb, wb)
	}
}

// leanBodies are Anthropic bodies with texts of every kind: Claude Code's
// recorded requests, an agent's conversation, and small odd ones.
func leanBodies(t testing.TB) [][]byte {
	bodies := [][]byte{agentBody(DialectAnthropic, DialectOpenAI, 8<<10)}
	files, _ := filepath.Glob("testdata/claude-code/*.txtar")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range txtar.Parse(b).Files {
			if strings.HasSuffix(f.Name, ".json") {
				bodies = append(bodies, f.Data)
			}
		}
	}
	for _, s := range []string{
		`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi \"there\"\n\u00e9 <b>"}]}`,
		`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":""},{"type":"text","text":"a\ud83d\ude00"},{"type":"text","text":"\ud800"}]}]}`,
		"{\"model\":\"m\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"bad \xff utf-8\"}]}",
		`{"model":"m","max_tokens":5,"messages":[{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b\n"}]}]}`,
		`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"r\n"},{"type":"tool_result","tool_use_id":"u","content":[{"type":"text","text":"x"},{"type":"text","text":"y"}]},{"type":"tool_result","tool_use_id":"v","content":[{"type":"text","text":"z\"","cache_control":{"type":"ephemeral"}}]},{"type":"text","text":"after"}]}]}`,
		`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"x"},{"type":"image","source":{"type":"url","url":"u"}}]}]}]}`,
		`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":7}]}]}`,
		`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":"before"},{"type":"tool_result","tool_use_id":"t","content":"r"},{"type":"text","text":"after"}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"u","content":"r"}]}]}`,
		`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[]},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{"a":[1,2]}},{"type":"tool_use","id":"u","name":"g"},{"type":"tool_use","id":7,"name":"h","input":{}}]}]}`,
		`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","is_error":true,"content":""},{"type":"tool_result","tool_use_id":"u","content":null},{"type":"tool_result","tool_use_id":"v"},{"type":"tool_result","tool_use_id":"w","is_error":1,"content":"x"},{"type":"text","text":"a","text":"b"}]}]}`,
		`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":"a"},"b",{"type":"text","text":"c","cache_control":{"type":"ephemeral"}}]}]}`,
		`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_use","id":"t","name":"f","input":{"a":[1,,]}}]}]}`,
		`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"ctl` + "\x01" + `"}]}`,
		`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"},{"role":"user","content":[{"type":"text","text":"a\q"}]}]}`,
		`{"model":"m","max_tokens":5,"messages":[{"content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}},{"type":"text","text":"b"}],"role":"user","clear_at":1},{"role":"assistant","content":[{"type":"text","text":"c"}],"x":[{"y":"\u00e9"}]}]}`,
		`{"model":"m","max_tokens":5,"messages":[{"role":"user","role":"assistant","content":"x"},{"role":"user","content":"y","content":"z"}]}`,
		`{"model":"m","max_tokens":5,"messages":[{"role":"us\u0065r","content":"x"},{"role":null,"content":"y"},{"role":"system","content":"z"},{"role":"assistant","content":"w"}]}`,
		`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"x"}],"is_error":false}]},{"role":"user","content":"\ud83d\ude00"},{"role":7,"content":"x"}]}`,
		`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_use","id":"t","name":"f","input":  {"a" : 1} }]},null]}`,
		// Parts past the arena's first array (addPart), in a message read
		// lean, then in one that is not.
		`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"},{"type":"text","text":"c"}]},` +
			`{"role":"assistant","content":[{"type":"text","text":"d"},{"type":"text","text":"e"},{"type":"text","text":"f"},{"type":"text","text":"g"}]},` +
			`{"role":"user","content":[{"type":"text","text":"h"},{"type":"text","text":"i"},{"type":"text","text":"j"},{"type":"text","text":"k","cache_control":{"type":"ephemeral"}}]},` +
			`{"role":"assistant","content":[{"type":"text","text":"l"},{"type":"text","text":"m"}]},{"role":"user","content":"n"}]}`,
		`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"},{"type":"text","text":"c"},{"type":"text","text":"d"},` +
			`{"type":"text","text":"e"},{"type":"text","text":"f"},{"type":"text","text":"g"},{"type":"text","text":"h"},{"type":"text","text":"\u00e9"}]}]}`,
	} {
		bodies = append(bodies, []byte(s))
	}
	return bodies
}

func TestLeanDecoding(t *testing.T) {
	for _, b := range leanBodies(t) {
		checkLean(t, b)
	}
}

// FuzzLeanDecoding is TestLeanDecoding on any body.
func FuzzLeanDecoding(f *testing.F) {
	for _, b := range leanBodies(f) {
		if len(b) < 4<<10 {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkLean(t, b) })
}
