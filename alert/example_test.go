package alert_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/llmguard/llmguard/alert"
	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/resilience"
)

func Example() {
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m alert.Message
		json.NewDecoder(r.Body).Decode(&m)
		fmt.Println(m.Text)
	}))
	defer hook.Close()

	n, err := alert.New(&alert.Options{WebhookURL: hook.URL})
	if err != nil {
		fmt.Println(err)
		return
	}
	bad := resilience.Event{Kind: resilience.EventFailure, Target: "openai/gpt-4.1", Verdict: &classify.Verdict{
		Class: classify.Auth, Scope: classify.ScopeKey, Status: 401,
		Message: "401 invalid_api_key: Incorrect API key provided: sk-proj-abcdefghijklmnop"}}
	n.Event(bad)
	n.Event(bad) // the same state: no second alert
	n.Close(context.Background())
	// Output:
	// [llmguard] :rotating_light: openai key was refused (authentication): 401 invalid_api_key: Incorrect API key provided: sk-proj-*** → fix the key in the client's env block (wrong, revoked or missing API key)
}
