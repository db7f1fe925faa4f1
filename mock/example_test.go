package mock_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/llmguard/llmguard/mock"
)

// A test scripts two overloads, then counts the attempts its client made.
func Example() {
	srv := mock.New(nil)
	ts := httptest.NewServer(srv)
	defer ts.Close()

	for range 3 {
		req, _ := http.NewRequest("POST", ts.URL+"/v1/messages",
			strings.NewReader(`{"model":"claude-sonnet-4-5","max_tokens":100,"messages":[{"role":"user","content":"Hello there"}]}`))
		req.Header.Set("x-api-key", "sk-ant-example")
		req.Header.Set(mock.FaultHeader, "529,529,200")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(resp.StatusCode, len(body) > 0)
	}
	fmt.Println(len(srv.Requests()), "attempts")
	// Output:
	// 529 true
	// 529 true
	// 200 true
	// 3 attempts
}

// Scenarios are YAML (or JSON) files or built-in names.
func ExampleParseScenario() {
	sc, err := mock.ParseScenario([]byte(`
name: anthropic-flaky
seed: 7
rules:
  - match: {provider: anthropic}
    sequence: "529,529,200"
  - match: {provider: openai, model: "gpt-4*"}
    fault: "429:2"
    rate: 0.3
`))
	if err != nil {
		panic(err)
	}
	fmt.Println(sc.Name, len(sc.Rules), sc.Rules[0].Sequence[0])

	_, err = mock.ParseScenario([]byte("rules:\n  - sequence: [529, 52x]\n"))
	fmt.Println(err)
	// Output:
	// anthropic-flaky 2 529
	// rules[0].sequence[1]: unknown fault "52x" (want a status code or one of ok, overloaded, rate_limit, insufficient_quota, credit_low, daily_quota, bad_key, permission, not_found, invalid_request, context_overflow, too_large, server_error, timeout, html_502, reset, hang, silent, truncated, midstream, stall, stuck, long, malformed)
}
