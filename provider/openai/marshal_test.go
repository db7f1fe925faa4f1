package openai

import (
	"encoding/json"
	"math"
	"testing"

	segjson "github.com/segmentio/encoding/json"

	pt "github.com/llmguard/llmguard/internal/providertest"
	"github.com/llmguard/llmguard/provider"
)

// checkAppend: the JSON library writes a request byte for byte as
// encoding/json's Marshal does, and fails where it fails (NaN, infinities).
func checkAppend(t *testing.T, w *wireRequest, wantOK bool) {
	t.Helper()
	got, gerr := segjson.Marshal(w)
	want, err := json.Marshal(w)
	if (gerr == nil) != (err == nil) || string(got) != string(want) {
		t.Fatalf("library:\n got %s (%v)\nwant %s (%v)", got, gerr, want, err)
	}
	if wantOK && err != nil {
		t.Fatalf("encoding/json refused a plain request: %v", err)
	}
}

func TestRequestMatchesEncodingJSON(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	temp, max := 0.2, 128
	plain := &provider.Request{System: "You are <terse> & quick.", MaxTokens: max, Temperature: &temp, TopP: f(1e-7),
		Stop: []string{"\n\n", "END"}, Messages: []provider.Message{
			{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: "Summarise \"this\"\u2028 \xff"}}},
			{Role: provider.RoleAssistant, Content: []provider.Part{{Type: provider.PartText, Text: "a"}, {Type: provider.PartText, Text: "b"}}},
			{Role: provider.RoleUser},
		}}
	for _, tt := range []struct {
		name     string
		req      *provider.Request
		q        quirks
		stream   bool
		wantFast bool
	}{
		{"plain", plain, quirksFor("openai"), false, true},
		{"plain stream", plain, quirksFor("openai"), true, true},
		{"plain max_tokens", plain, quirksFor("groq"), true, true},
		{"mistral stream", plain, quirksFor("mistral"), true, true},
		{"tool conversation", pt.ToolConversation(), quirksFor("openai"), false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := buildWire(t, tt.req, tt.stream, tt.q)
			checkAppend(t, w, tt.wantFast)
		})
	}
	for _, v := range []float64{0, math.Copysign(0, -1), 1, 0.1, 1e20, 1e21, 1e-6, 9.99e-7, 1.5e-9, -3e300, 5e-324, math.MaxFloat64, math.Inf(1), math.NaN()} {
		w := &wireRequest{Model: "m", Messages: []wireMessage{}, Temperature: &v, TopP: &v}
		checkAppend(t, w, !math.IsInf(v, 0) && !math.IsNaN(v))
	}
}

// buildWire is encode's wireRequest, captured through the fallback path.
func buildWire(t *testing.T, req *provider.Request, stream bool, q quirks) *wireRequest {
	t.Helper()
	body, _, err := encode(req, "gpt-4o", stream, q)
	if err != nil {
		t.Fatal(err)
	}
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		t.Fatal(err)
	}
	for i := range w.Messages { // content as encode sets it: string, nil or parts
		if parts, ok := w.Messages[i].Content.([]any); ok {
			raw := make([]json.RawMessage, len(parts))
			for j, p := range parts {
				raw[j], _ = json.Marshal(p)
			}
			w.Messages[i].Content = raw
		}
	}
	return &w
}

func FuzzAppendRequest(f *testing.F) {
	f.Add("gpt-4o", "system", "Hello <b>&</b>", "tool_1", 128, 0.2, true, "STOP")
	f.Add("", "", "\xff\u2028\"\\\n", "", 0, 1e-9, false, "")
	f.Fuzz(func(t *testing.T, model, role, content, callID string, n int, temp float64, stream bool, stop string) {
		w := &wireRequest{Model: model, MaxTokens: n, MaxCompletionTokens: -n, Temperature: &temp, Stream: stream,
			Messages: []wireMessage{{Role: role, Content: content, ToolCallID: callID}, {Role: role}}}
		if stop != "" {
			w.Stop = []string{stop, content}
			w.StreamOptions = &streamOptions{IncludeUsage: stream}
		}
		checkAppend(t, w, !math.IsInf(temp, 0) && !math.IsNaN(temp))
		got, _ := segjson.Marshal(wirePart{Type: "text", Text: content})
		if want, _ := json.Marshal(wirePart{Type: "text", Text: content}); string(got) != string(want) {
			t.Fatalf("text part %q: %s, want %s", content, got, want)
		}
	})
}
