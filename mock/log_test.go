package mock

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestRequestLog(t *testing.T) {
	var logs bytes.Buffer
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	srv, ts := newTS(t, &Config{Logger: slog.New(slog.NewTextHandler(&logs, nil)), Now: func() time.Time { return now }, MaxRequests: 3})
	do(t, ts.URL, call{api: dialectAnthropic, model: "claude-sonnet-4-5", text: "hi", header: "529"})
	do(t, ts.URL, call{api: dialectOpenAI, model: "gpt-4.1", text: "hi", stream: true})
	do(t, ts.URL, call{api: dialectGemini, model: "gemini-2.5-flash", text: "hi"})
	do(t, ts.URL, call{api: dialectAzure, model: "dep", text: "hi", header: "429:3"})
	want := []Request{
		{Seq: 2, Time: now, Method: "POST", Path: "/v1/chat/completions", Provider: "openai", Endpoint: "generate", Model: "gpt-4.1", Stream: true, Key: "…1234", Fault: "ok", Status: 200},
		{Seq: 3, Time: now, Method: "POST", Path: "/v1beta/models/gemini-2.5-flash:generateContent", Provider: "gemini", Endpoint: "generate", Model: "gemini-2.5-flash", Key: "…1234", Fault: "ok", Status: 200},
		{Seq: 4, Time: now, Method: "POST", Path: "/openai/deployments/dep/chat/completions", Provider: "azure", Endpoint: "generate", Model: "dep", Key: "…1234", Fault: "429:3", Status: 429},
	}
	got := srv.Requests()
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(Request{}, "RequestID")); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(got[0].RequestID, "req_") || got[1].RequestID != "" {
		t.Errorf("request ids %q %q", got[0].RequestID, got[1].RequestID)
	}

	// Over HTTP, filtered.
	resp, err := http.Get(ts.URL + "/_mock/requests?provider=azure")
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Count    int       `json:"count"`
		Requests []Request `json:"requests"`
	}
	json.NewDecoder(resp.Body).Decode(&page)
	resp.Body.Close()
	if page.Count != 1 || page.Requests[0].Fault != "429:3" || page.Requests[0].Status != 429 {
		t.Errorf("GET /_mock/requests: %+v", page)
	}

	// The slog records carry the masked key and never the key itself.
	out := logs.String()
	if strings.Count(out, "msg=\"mock request\"") != 4 || !strings.Contains(out, "key=…1234") || strings.Contains(out, "test-key") {
		t.Errorf("logs:\n%s", out)
	}

	// Reset over HTTP clears the log and the sequences.
	resp, err = http.Post(ts.URL+"/_mock/reset", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent || len(srv.Requests()) != 0 {
		t.Errorf("reset: status %d, %d entries left", resp.StatusCode, len(srv.Requests()))
	}
	if r, _ := do(t, ts.URL, call{api: dialectAnthropic, model: "m", text: "hi", header: "529,200"}); r.StatusCode != 529 {
		t.Errorf("after reset the sequence restarts: %d", r.StatusCode)
	}
	if srv.Requests()[0].Seq != 1 {
		t.Errorf("seq after reset %d", srv.Requests()[0].Seq)
	}

	resp, err = http.Get(ts.URL + "/_mock/scenario")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("scenario: %d", resp.StatusCode)
	}
	resp, _ = http.Get(ts.URL + "/_mock/nope")
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("unknown admin path: %d", resp.StatusCode)
	}
}

func TestConcurrentRequests(t *testing.T) {
	sc, _ := Builtin("rate-limited")
	srv, ts := newTS(t, &Config{Scenario: sc})
	const n = 40
	done := make(chan int, n)
	for i := range n {
		go func() {
			api := apis[i%len(apis)]
			resp, err := http.DefaultClient.Do(call{api: api.name, model: api.model, text: "hi", stream: i%2 == 0}.request(ts.URL))
			if err != nil {
				done <- 0
				return
			}
			resp.Body.Close()
			done <- resp.StatusCode
		}()
	}
	for range n {
		if s := <-done; s != 200 && s != 429 {
			t.Errorf("status %d", s)
		}
	}
	if got := len(srv.Requests()); got != n {
		t.Errorf("%d logged, want %d", got, n)
	}
}
