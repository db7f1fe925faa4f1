package mock

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/llmguard/llmguard/classify"
)

func TestParseStep(t *testing.T) {
	tests := []struct {
		in      string
		want    Step
		wantErr string
	}{
		{"529", Step{Kind: KindOverloaded, Status: 529}, ""},
		{"200", Step{Kind: KindOK}, ""},
		{"429:2", Step{Kind: KindRateLimit, Status: 429, Arg: 2, HasArg: true}, ""},
		{"rate-limit", Step{Kind: KindRateLimit}, ""},
		{"midstream:5", Step{Kind: KindMidstream, Arg: 5, HasArg: true}, ""},
		{"200@300ms", Step{Kind: KindOK, Latency: 300 * time.Millisecond}, ""},
		{" hang ", Step{Kind: KindHang}, ""},
		{"418", Step{Kind: KindInvalidRequest, Status: 418}, ""},
		{"52x", Step{}, `unknown fault "52x"`},
		{"700", Step{}, "out of range"},
		{"429:x", Step{}, "bad argument"},
		{"ok@soon", Step{}, "bad latency"},
		{"", Step{}, "empty step"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseStep(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			again, err := ParseStep(got.String())
			if err != nil || again != got {
				t.Errorf("String %q does not round-trip: %+v %v", got.String(), again, err)
			}
		})
	}
}

// TestErrorFaults checks every error kind over HTTP in every dialect: the
// status, the field a classifier decides on, and the key headers.
func TestErrorFaults(t *testing.T) {
	type want struct {
		status int
		path   string // JSON path in the body
		value  any
		header [2]string // a header that must be present with this value ("" value: present)
	}
	tests := []struct {
		api, fault string
		want       want
	}{
		{dialectAnthropic, "529", want{529, "error.type", "overloaded_error", [2]string{"x-should-retry", "true"}}},
		{dialectAnthropic, "overloaded", want{529, "error.message", "Overloaded", [2]string{}}},
		{dialectAnthropic, "429:7", want{429, "error.type", "rate_limit_error", [2]string{"retry-after", "7"}}},
		{dialectAnthropic, "rate_limit", want{429, "error.type", "rate_limit_error", [2]string{"retry-after", "2"}}},
		{dialectAnthropic, "credit_low", want{400, "error.message", "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.", [2]string{}}},
		{dialectAnthropic, "insufficient_quota", want{400, "error.type", "invalid_request_error", [2]string{}}},
		{dialectAnthropic, "daily_quota", want{429, "error.details.error_code", "enforced_spend_limit_reached", [2]string{}}},
		{dialectAnthropic, "bad_key", want{401, "error.type", "authentication_error", [2]string{"x-should-retry", "false"}}},
		{dialectAnthropic, "401", want{401, "error.message", "invalid x-api-key", [2]string{}}},
		{dialectAnthropic, "not_found", want{404, "error.message", "model: claude-sonnet-4-5", [2]string{}}},
		{dialectAnthropic, "context_overflow", want{400, "error.message", "prompt is too long: 208310 tokens > 200000 maximum", [2]string{}}},
		{dialectAnthropic, "500", want{500, "error.type", "api_error", [2]string{}}},
		{dialectAnthropic, "413", want{413, "error.type", "request_too_large", [2]string{}}},
		{dialectAnthropic, "504", want{504, "error.type", "timeout_error", [2]string{}}},
		{dialectAnthropic, "503:10", want{503, "error.type", "overloaded_error", [2]string{"retry-after", "10"}}},
		{dialectOpenAI, "429", want{429, "error.code", "rate_limit_exceeded", [2]string{"x-ratelimit-remaining-requests", "0"}}},
		{dialectOpenAI, "429:3", want{429, "error.message", "Rate limit reached for gpt-4.1 in organization org-mock on requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in 3s. Visit https://platform.openai.com/account/rate-limits to learn more.", [2]string{"retry-after", "3"}}},
		{dialectOpenAI, "insufficient_quota", want{429, "error.code", "insufficient_quota", [2]string{}}},
		{dialectOpenAI, "bad_key", want{401, "error.code", "invalid_api_key", [2]string{}}},
		{dialectOpenAI, "401", want{401, "error.message", "Incorrect API key provided: sk-***1234. You can find your API key at https://platform.openai.com/account/api-keys.", [2]string{}}},
		{dialectOpenAI, "overloaded", want{503, "error.type", "server_error", [2]string{}}},
		{dialectOpenAI, "529", want{529, "error.type", "server_error", [2]string{}}},
		{dialectOpenAI, "500", want{500, "error.message", "The server had an error while processing your request. Sorry about that!", [2]string{}}},
		{dialectOpenAI, "context_overflow", want{400, "error.code", "context_length_exceeded", [2]string{}}},
		{dialectOpenAI, "404", want{404, "error.code", "model_not_found", [2]string{}}},
		{dialectOpenAI, "403", want{403, "error.code", "unsupported_country_region_territory", [2]string{}}},
		{dialectAzure, "429:4", want{429, "error.code", "429", [2]string{"retry-after-ms", "4000"}}},
		{dialectAzure, "daily_quota", want{429, "error.code", "429", [2]string{"retry-after", "86400"}}},
		{dialectAzure, "401", want{401, "error.code", "401", [2]string{"apim-request-id", ""}}},
		{dialectAzure, "404", want{404, "error.code", "DeploymentNotFound", [2]string{}}},
		{dialectAzure, "insufficient_quota", want{429, "error.code", "insufficient_quota", [2]string{}}},
		{dialectGemini, "daily_quota", want{429, "error.details.0.violations.0.quotaId", "GenerateRequestsPerDayPerProjectPerModel-FreeTier", [2]string{}}},
		{dialectGemini, "daily_quota", want{429, "error.details.2.retryDelay", "36s", [2]string{}}},
		{dialectGemini, "429:5", want{429, "error.details.2.retryDelay", "5s", [2]string{}}},
		{dialectGemini, "rate_limit", want{429, "error.details.0.violations.0.quotaId", "GenerateRequestsPerMinutePerProjectPerModel-FreeTier", [2]string{}}},
		{dialectGemini, "insufficient_quota", want{429, "error.details.0.violations.0.quotaValue", "0", [2]string{}}},
		{dialectGemini, "bad_key", want{400, "error.details.0.reason", "API_KEY_INVALID", [2]string{}}},
		{dialectGemini, "credit_low", want{402, "error.status", "RESOURCE_EXHAUSTED", [2]string{}}},
		{dialectGemini, "503", want{503, "error.status", "UNAVAILABLE", [2]string{}}},
		{dialectGemini, "500", want{500, "error.status", "INTERNAL", [2]string{}}},
		{dialectGemini, "504", want{504, "error.status", "DEADLINE_EXCEEDED", [2]string{}}},
		{dialectGemini, "context_overflow", want{400, "error.message", "The input token count (1048577) exceeds the maximum number of tokens allowed (1048576).", [2]string{}}},
	}
	_, ts := newTS(t, nil)
	models := map[string]string{}
	for _, a := range apis {
		models[a.name] = a.model
	}
	for _, tt := range tests {
		t.Run(tt.api+"/"+tt.fault, func(t *testing.T) {
			resp, body := do(t, ts.URL, call{api: tt.api, model: models[tt.api], text: "hi", header: tt.fault})
			if resp.StatusCode != tt.want.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.want.status)
			}
			if got := jsonPath(t, body, tt.want.path); got != tt.want.value {
				t.Errorf("%s = %v, want %v\n%s", tt.want.path, got, tt.want.value, body)
			}
			if h := tt.want.header; h[0] != "" {
				got, ok := resp.Header[http.CanonicalHeaderKey(h[0])]
				if !ok || (h[1] != "" && got[0] != h[1]) {
					t.Errorf("header %s = %v, want %q", h[0], got, h[1])
				}
			}
			switch tt.api {
			case dialectAnthropic:
				if rid := resp.Header.Get("request-id"); rid == "" || jsonPath(t, body, "request_id") != rid {
					t.Errorf("request-id header %q vs body %v", rid, jsonPath(t, body, "request_id"))
				}
			case dialectOpenAI, dialectAzure:
				if resp.Header.Get("x-request-id") == "" {
					t.Error("no x-request-id")
				}
			}
		})
	}
}

func TestHTML502(t *testing.T) {
	_, ts := newTS(t, nil)
	for _, a := range apis {
		t.Run(a.name, func(t *testing.T) {
			resp, body := do(t, ts.URL, call{api: a.name, model: a.model, text: "hi", header: "502"})
			if resp.StatusCode != 502 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || resp.Header.Get("server") != "cloudflare" {
				t.Errorf("status %d headers %v", resp.StatusCode, resp.Header)
			}
			if !strings.Contains(string(body), "<title>") || !strings.Contains(string(body), "| 502: Bad gateway</title>") {
				t.Errorf("body %s", body)
			}
		})
	}
}

func TestMissingKey(t *testing.T) {
	_, ts := newTS(t, nil)
	want := map[string]int{dialectAnthropic: 401, dialectOpenAI: 401, dialectAzure: 401, dialectGemini: 403}
	for _, a := range apis {
		t.Run(a.name, func(t *testing.T) {
			resp, _ := do(t, ts.URL, call{api: a.name, model: a.model, text: "hi", noKey: true})
			if resp.StatusCode != want[a.name] {
				t.Errorf("status %d, want %d", resp.StatusCode, want[a.name])
			}
		})
	}
	_, open := newTS(t, &Config{AllowNoKey: true})
	if resp, _ := do(t, open.URL, call{api: dialectOpenAI, model: "m", text: "hi", noKey: true}); resp.StatusCode != 200 {
		t.Errorf("AllowNoKey: status %d", resp.StatusCode)
	}
}

func TestBadRequests(t *testing.T) {
	_, ts := newTS(t, nil)
	tests := []struct {
		name, method, path, body string
		want                     int
	}{
		{"not json", "POST", "/v1/messages", "{", 400},
		{"no model", "POST", "/v1/chat/completions", `{"messages":[]}`, 400},
		{"unknown path", "POST", "/v2/whatever", "{}", 404},
		{"bad gemini method", "POST", "/v1beta/models/gemini-2.5-flash:countTokens", "{}", 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, ts.URL+tt.path, strings.NewReader(tt.body))
			req.Header.Set("x-api-key", "k-1234567")
			req.Header.Set("Authorization", "Bearer k-1234567")
			resp, err := ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.want)
			}
		})
	}
	resp, body := do(t, ts.URL, call{api: dialectOpenAI, model: "m", text: "hi", header: "529,nope"})
	if resp.StatusCode != 400 || !strings.Contains(string(body), `unknown fault \"nope\"`) {
		t.Errorf("bad header: %d %s", resp.StatusCode, body)
	}
	// The fault names it lists don't read as billing: the request's fault.
	for _, p := range []string{"openai", "anthropic", "gemini", "deepseek"} {
		for _, spec := range []string{"529,nope", "insufficient_quotas"} {
			resp, body := do(t, ts.URL, call{api: dialectOpenAI, model: "m", text: "hi", header: spec})
			v := classify.Classify(classify.Input{Provider: p, Status: resp.StatusCode, Header: resp.Header, Body: body})
			if v.Class != classify.InvalidRequest || v.Scope != classify.ScopeRequest {
				t.Errorf("bad spec %q as %s: %s %s, want invalid_request of the request: %s", spec, p, v.Class, v.Scope, body)
			}
		}
	}
}

func TestReset(t *testing.T) {
	srv, ts := newTS(t, nil)
	for _, a := range apis {
		t.Run(a.name, func(t *testing.T) {
			_, err := ts.Client().Do(call{api: a.name, model: a.model, text: "hi", header: "reset"}.request(ts.URL))
			if err == nil {
				t.Fatal("want a connection error")
			}
			if !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, io.EOF) && !strings.Contains(err.Error(), "reset") {
				t.Errorf("err = %v, want connection reset", err)
			}
		})
	}
	reqs := srv.Requests()
	if len(reqs) != len(apis) || reqs[0].Fault != "reset" || reqs[0].Status != 0 {
		t.Errorf("log %+v", reqs)
	}
}

func TestHang(t *testing.T) {
	srv, ts := newTS(t, nil)
	for _, a := range apis {
		t.Run(a.name, func(t *testing.T) {
			before := len(srv.Requests())
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			errc := make(chan error, 1)
			go func() {
				req := call{api: a.name, model: a.model, text: "hi", header: "hang"}.request(ts.URL).WithContext(ctx)
				resp, err := ts.Client().Do(req)
				if err == nil {
					resp.Body.Close()
				}
				errc <- err
			}()
			// The client gives up once the mock has the request.
			waitFor(t, "the mock to have the request", func() bool {
				select {
				case err := <-errc:
					t.Fatalf("returned before hanging: %v", err)
				default:
				}
				return len(srv.Requests()) != before
			})
			select {
			case err := <-errc:
				t.Fatalf("answered while it should hang: %v", err)
			default:
			}
			cancel()
			if err := <-errc; !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v, want context.Canceled", err)
			}
		})
	}
	// Close releases hangs from the server side.
	errc := make(chan error, 1)
	go func() {
		_, err := ts.Client().Do(call{api: dialectOpenAI, model: "m", text: "hi", header: "hang"}.request(ts.URL))
		errc <- err
	}()
	waitFor(t, "the hanging request", func() bool { return len(srv.Requests()) >= len(apis)+1 })
	srv.Close()
	if err := <-errc; err == nil {
		t.Error("want an error after Close released the hang")
	}
}

func TestTruncatedBody(t *testing.T) {
	_, ts := newTS(t, nil)
	for _, a := range apis {
		t.Run(a.name, func(t *testing.T) {
			resp, err := ts.Client().Do(call{api: a.name, model: a.model, text: "hi there", header: "truncated"}.request(ts.URL))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("status %d", resp.StatusCode)
			}
			body, err := io.ReadAll(resp.Body)
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("read err = %v, want unexpected EOF", err)
			}
			if len(body) == 0 || int64(len(body)) >= resp.ContentLength {
				t.Errorf("read %d of %d bytes", len(body), resp.ContentLength)
			}
		})
	}
}

func TestStreamFaults(t *testing.T) {
	_, ts := newTS(t, nil)
	wantErr := map[string]string{dialectAnthropic: "overloaded_error", dialectOpenAI: "server_error", dialectAzure: "server_error", dialectGemini: "UNAVAILABLE"}
	for _, a := range apis {
		for _, tc := range []struct {
			fault   string
			words   int
			errType string
		}{
			{"midstream", 3, wantErr[a.name]},
			{"midstream:1", 1, wantErr[a.name]},
			{"midstream:0", 0, wantErr[a.name]},
			{"truncated", 2, ""},
			{"truncated:4", 4, ""},
		} {
			t.Run(a.name+"/"+tc.fault, func(t *testing.T) {
				resp, err := ts.Client().Do(call{api: a.name, model: a.model, text: "one two three four five six", stream: true, header: tc.fault}.request(ts.URL))
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Fatalf("status %d", resp.StatusCode)
				}
				res := readStream(t, a.name, resp.Body)
				wantText := strings.Join(tokens("Mock answer from " + a.model + ": one two three four five six")[:tc.words], "")
				if res.text != wantText || res.done || res.errType != tc.errType {
					t.Errorf("text %q (want %q) done %v errType %q (want %q)", res.text, wantText, res.done, res.errType, tc.errType)
				}
			})
		}
	}
}

func TestLatency(t *testing.T) {
	var s sleeps
	sc, err := ParseScenario([]byte("rules:\n  - match: {provider: gemini}\n    latency: {fixed: 250ms}\n  - match: {provider: openai}\n    latency: {min: 10ms, max: 20ms}\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, ts := newTS(t, &Config{Scenario: sc, Sleep: s.sleep})
	do(t, ts.URL, call{api: dialectAnthropic, model: "m", text: "hi", header: "200@300ms"})
	do(t, ts.URL, call{api: dialectGemini, model: "g", text: "hi"})
	do(t, ts.URL, call{api: dialectOpenAI, model: "o", text: "hi"})
	do(t, ts.URL, call{api: dialectAnthropic, model: "m", text: "hi"})
	if slept := s.all(); len(slept) != 3 || slept[0] != 300*time.Millisecond || slept[1] != 250*time.Millisecond || slept[2] < 10*time.Millisecond || slept[2] >= 20*time.Millisecond {
		t.Errorf("slept %v", slept)
	}
}

func TestLatencySample(t *testing.T) {
	sc, _ := ParseScenario([]byte("seed: 3\nrules:\n  - latency: {median: 100ms, p99: 1s}\n"))
	srv := New(&Config{Scenario: sc})
	var below, total int
	for range 2000 {
		d := srv.next(0, &sc.Rules[0], "p", "m").Latency
		if d <= 0 || d > 4*time.Second {
			t.Fatalf("sample %v out of bounds", d)
		}
		if d <= 100*time.Millisecond {
			below++
		}
		total++
	}
	// The median splits the samples roughly in half.
	if below < total*4/10 || below > total*6/10 {
		t.Errorf("%d of %d samples at or below the median", below, total)
	}
}

func TestStall(t *testing.T) {
	var s sleeps
	srv, ts := newTS(t, &Config{Sleep: s.sleep, KeepAlive: 7 * time.Second})
	for _, a := range apis {
		t.Run(a.name+"/json", func(t *testing.T) {
			resp, body := do(t, ts.URL, call{api: a.name, model: a.model, text: "hi", header: "stall:2"})
			if resp.StatusCode != 200 || !strings.HasPrefix(string(body), "\n\n{") {
				t.Fatalf("status %d body %q", resp.StatusCode, body)
			}
			if !strings.Contains(string(body), "Mock answer from "+a.model) {
				t.Errorf("no answer after the keep-alives: %s", body)
			}
		})
		t.Run(a.name+"/stream", func(t *testing.T) {
			resp, body := do(t, ts.URL, call{api: a.name, model: a.model, text: "hi", stream: true, header: "stall:3"})
			if resp.StatusCode != 200 || !strings.HasPrefix(string(body), ": keep-alive\n\n: keep-alive\n\n: keep-alive\n\n") {
				t.Fatalf("status %d body %q", resp.StatusCode, body)
			}
			if res := readStream(t, a.name, strings.NewReader(string(body))); !res.done || res.text == "" {
				t.Errorf("stream after keep-alives: %+v", res)
			}
		})
	}
	if slept := s.all(); len(slept) != 5*len(apis) || slept[0] != 7*time.Second {
		t.Errorf("keep-alive waits %v", slept)
	}

	// Without a count it stalls until the client gives up.
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := ts.Client().Do(call{api: dialectAnthropic, model: "m", text: "hi", stream: true, header: "stall"}.request(ts.URL).WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 14)
	if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != ": keep-alive\n\n" {
		t.Fatalf("first keep-alive %q %v", buf, err)
	}
	cancel()
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if got := srv.Requests(); got[len(got)-1].Fault != "stall" || got[len(got)-1].Status != 200 {
		t.Errorf("log %+v", got[len(got)-1])
	}
}

func TestOpenRouterMidstream(t *testing.T) {
	srv, ts := newTS(t, nil)
	req, _ := http.NewRequest("POST", ts.URL+"/openrouter/v1/chat/completions",
		strings.NewReader(`{"model":"openai/gpt-4o","stream":true,"messages":[{"role":"user","content":"a b c d"}]}`))
	req.Header.Set("Authorization", "Bearer sk-or-1234567")
	req.Header.Set(FaultHeader, "midstream:2")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	s := string(body)
	if !strings.HasPrefix(s, ": OPENROUTER PROCESSING\n\n") || resp.Header.Get("x-generation-id") == "" {
		t.Errorf("no OpenRouter keep-alive or generation id: %v\n%s", resp.Header, s)
	}
	if !strings.Contains(s, `"finish_reason":"error"`) || !strings.Contains(s, `"error":{"code":502`) || !strings.HasSuffix(s, "data: [DONE]\n\n") {
		t.Errorf("stream:\n%s", s)
	}
	if p := srv.Requests()[0].Provider; p != "openrouter" {
		t.Errorf("provider %q", p)
	}
}

func TestStuck(t *testing.T) {
	srv, ts := newTS(t, nil)
	for _, a := range apis {
		t.Run(a.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			resp, err := ts.Client().Do(call{api: a.name, model: a.model, text: "one two three four five", stream: true, header: "stuck:2"}.request(ts.URL).WithContext(ctx))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			// Read events until two text deltas arrived; then the stream is silent.
			got := make(chan string, 1)
			go func() {
				res := readStream(t, a.name, resp.Body)
				got <- res.text
			}()
			select {
			case text := <-got:
				t.Fatalf("stream ended instead of going silent (text %q)", text)
			case <-time.After(50 * time.Millisecond):
			}
			cancel() // the client gives up
			if text := <-got; text != "Mock answer" {
				t.Errorf("text before silence %q", text)
			}
		})
	}
	if n := len(srv.Requests()); n != len(apis) {
		t.Errorf("%d requests logged", n)
	}
}

// A long answer takes its generation time: all of it before a
// non-streaming answer, spread between the deltas of a stream (the first
// at once), in every dialect.
func TestLongAnswer(t *testing.T) {
	for _, api := range []string{dialectAnthropic, dialectOpenAI, dialectGemini} {
		for _, stream := range []bool{false, true} {
			var s sleeps
			_, ts := newTS(t, &Config{Sleep: s.sleep})
			res, body := do(t, ts.URL, call{api: api, model: "m", text: "tell me a long story about the sea", stream: stream, header: "long:40"})
			if res.StatusCode != 200 || !strings.Contains(string(body), "Mock") {
				t.Fatalf("%s stream=%v: %d %s", api, stream, res.StatusCode, body)
			}
			slept := s.all()
			var total time.Duration
			for _, d := range slept {
				total += d
			}
			if (!stream && (len(slept) != 1 || total != 40*time.Second)) || (stream && (len(slept) < 5 || total < 30*time.Second || total > 40*time.Second)) {
				t.Errorf("%s stream=%v: slept %v (total %v)", api, stream, slept, total)
			}
		}
	}
}
