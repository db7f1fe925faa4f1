package mock

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/internal/sse"
)

// TestClassifierAgrees checks that every error the mock sends is classified
// the way the fault kind means, so tests built on the mock exercise the
// classes they think they do.
func TestClassifierAgrees(t *testing.T) {
	type want struct {
		class     classify.Class
		retryable bool
		wait      time.Duration // -1: don't check
	}
	kinds := []struct {
		fault string
		want  want
		only  string // a dialect, "" for all
	}{
		{"overloaded", want{classify.Overloaded, true, -1}, ""},
		{"529", want{classify.Overloaded, true, -1}, ""},
		{"rate_limit", want{classify.RateLimited, true, 2 * time.Second}, ""},
		{"429:5", want{classify.RateLimited, true, 5 * time.Second}, ""},
		{"insufficient_quota", want{classify.QuotaExhausted, false, -1}, ""},
		{"credit_low", want{classify.QuotaExhausted, false, -1}, ""},
		{"daily_quota", want{classify.QuotaExhausted, false, -1}, ""},
		{"bad_key", want{classify.Auth, false, -1}, ""},
		{"permission", want{classify.Permission, false, -1}, ""},
		{"not_found", want{classify.NotFound, false, -1}, ""},
		{"invalid_request", want{classify.InvalidRequest, false, -1}, ""},
		{"context_overflow", want{classify.ContextLengthExceeded, false, -1}, ""},
		{"too_large", want{classify.RequestTooLarge, false, -1}, ""},
		{"server_error", want{classify.ServerError, true, -1}, ""},
		{"timeout", want{classify.Timeout, true, -1}, dialectAnthropic},
		{"timeout", want{classify.Timeout, true, -1}, dialectGemini},
		// OpenAI's 504 is the nginx edge's HTML page, which the classifier
		// files under server_error (a proxy failure).
		{"timeout", want{classify.ServerError, true, -1}, dialectOpenAI},
		{"timeout", want{classify.ServerError, true, -1}, dialectAzure},
		{"html_502", want{classify.ServerError, true, -1}, ""},
	}
	_, ts := newTS(t, nil)
	for _, a := range apis {
		for _, k := range kinds {
			if k.only != "" && k.only != a.name {
				continue
			}
			t.Run(a.name+"/"+k.fault, func(t *testing.T) {
				resp, body := do(t, ts.URL, call{api: a.name, model: a.model, text: "hi", header: k.fault})
				provider := a.name
				v := classify.Classify(classify.Input{Provider: provider, Status: resp.StatusCode, Header: resp.Header, Body: body})
				got := want{v.Class, v.Retryable, -1}
				if k.want.wait >= 0 {
					got.wait = v.Wait
				}
				if got != k.want {
					t.Errorf("classified %+v, want %+v (%s)\n%s", got, k.want, v.Message, body)
				}
				if a.name == dialectAnthropic || a.name == dialectOpenAI {
					if v.RequestID == "" {
						t.Errorf("classifier found no request id: %s", v.Message)
					}
				}
			})
		}
		t.Run(a.name+"/midstream", func(t *testing.T) {
			_, body := do(t, ts.URL, call{api: a.name, model: a.model, text: "a b c d e", stream: true, header: "midstream:1"})
			rd := sse.NewReader(bytes.NewReader(body))
			var verdicts []string
			for {
				ev, err := rd.Next()
				if err != nil {
					break
				}
				if v, ok := classify.ClassifyStreamError(a.name, ev.Data, nil); ok {
					verdicts = append(verdicts, fmt.Sprint(v.Class, " ", v.Retryable))
				}
			}
			want := "overloaded true"
			if a.name == dialectOpenAI || a.name == dialectAzure {
				want = "server_error true"
			}
			if len(verdicts) != 1 || verdicts[0] != want {
				t.Errorf("stream error verdicts %v, want [%s]\n%s", verdicts, want, body)
			}
		})
	}
}

func TestResetTimes(t *testing.T) {
	now := time.Date(2026, 8, 21, 14, 2, 16, 0, time.UTC)
	_, ts := newTS(t, &Config{Now: func() time.Time { return now }})
	resp, _ := do(t, ts.URL, call{api: dialectAnthropic, model: "m", text: "hi", header: "429:22"})
	if got := resp.Header.Get("anthropic-ratelimit-requests-reset"); got != "2026-08-21T14:02:38Z" {
		t.Errorf("requests-reset %q", got)
	}
	resp, body := do(t, ts.URL, call{api: dialectAnthropic, model: "m", text: "hi", header: "daily_quota"})
	v := classify.Classify(classify.Input{Provider: "anthropic", Status: resp.StatusCode, Header: resp.Header, Body: body, Now: now})
	if want := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC); !v.Until.Equal(want) || v.Class != classify.QuotaExhausted {
		t.Errorf("spend limit verdict %+v, want until %v", v, want)
	}
}
