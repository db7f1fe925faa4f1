package openai_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/openai"
)

func TestRelays(t *testing.T) {
	tests := []struct {
		cfg  openai.Config
		want bool
	}{
		{openai.Config{}, true}, // name "openai"
		{openai.Config{Name: "deepseek"}, false},
		{openai.Config{Name: "work", Responses: true}, true},
		{openai.Config{Name: "azure", BaseURL: "https://x.openai.azure.com"}, false},
		{openai.Config{Name: "openai", Azure: true}, false},
	}
	for _, tt := range tests {
		if got := openai.New(&tt.cfg).Relays(provider.DialectResponses); got != tt.want {
			t.Errorf("%+v: Relays = %v", tt.cfg, got)
		}
	}
	if openai.New(nil).Relays("openai") {
		t.Error("relays chat completions")
	}
}

// A relayed request keeps the client's body (fields, order, unknown keys)
// with the attempt's model and stream flag; the answer comes back verbatim
// beside its canonical form.
func TestResponsesRelay(t *testing.T) {
	var got []byte
	answer := `{"id":"resp_1","object":"response","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"model":"gpt-4.1-2025-04-14","output":[{"type":"reasoning","id":"rs_1","summary":[]},{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"Hel","annotations":[]}]},{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{\"a\":1}"}],"usage":{"input_tokens":7,"output_tokens":3,"total_tokens":10},"future":true}`
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/responses" {
			t.Errorf("path %s", r.URL.Path)
		}
		got, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", "req_r")
		io.WriteString(w, answer)
	}))
	defer ts.Close()
	a := openai.New(&openai.Config{BaseURL: ts.URL + "/v1", APIKey: "k"})
	body := `{"input":"x","model":"fast","stream":false,"z":{"k":[1]},"include":["a"]}`
	req := &provider.Request{Model: "gpt-4.1", Passthrough: &provider.Passthrough{Dialect: provider.DialectResponses, Body: []byte(body)}}
	resp, err := a.Chat(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"input":"x","model":"gpt-4.1","z":{"k":[1]},"include":["a"]}`; string(got) != want {
		t.Errorf("sent %s, want %s", got, want)
	}
	if string(resp.Raw) != answer || resp.Text != "Hel" || resp.FinishReason != provider.FinishLength ||
		len(resp.ToolCalls) != 1 || string(resp.ToolCalls[0].Arguments) != `{"a":1}` || resp.Usage.OutputTokens != 3 ||
		resp.RequestID != "req_r" || resp.Model != "gpt-4.1-2025-04-14" {
		t.Errorf("%+v", resp)
	}
}
