package provider_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/anthropic"
)

// An adapter turns the canonical request into one provider's API call; a
// failure comes back as a *provider.Error carrying the classifier's verdict.
func Example() {
	// A stand-in for api.anthropic.com: busy first, then an answer.
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.Header().Set("Content-Type", "application/json")
		if calls == 1 {
			w.WriteHeader(529)
			io.WriteString(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
			return
		}
		io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5",
			"content":[{"type":"text","text":"Hello!"}],"stop_reason":"end_turn","usage":{"input_tokens":8,"output_tokens":3}}`)
	}))
	defer srv.Close()

	a := anthropic.New(&anthropic.Config{BaseURL: srv.URL, APIKey: "sk-ant-example",
		Client: provider.NewHTTPClient(nil)})
	req := &provider.Request{Model: "claude-sonnet-4-5", Messages: []provider.Message{{
		Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: "Hi"}}}}}

	_, err := a.Chat(context.Background(), req)
	if pe := provider.AsError(err); pe != nil {
		fmt.Println("failed:", pe.Verdict.Class, "retryable:", pe.Verdict.Retryable)
	}
	resp, err := a.Chat(context.Background(), req)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Text, resp.FinishReason, resp.Usage.InputTokens, resp.Usage.OutputTokens)
	// Output:
	// failed: overloaded retryable: true
	// Hello! stop 8 3
}
