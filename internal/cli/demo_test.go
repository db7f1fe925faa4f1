package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/llmguard/llmguard/demo"
)

// The demo's summary must add up: every request is served or failed, the
// attempts each client reports are the ones the mock logged, and llmguard
// serves more than the client that never retries.
func TestDemoJSONSummaryConsistent(t *testing.T) {
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: noEnv}
	code := MainEnv(context.Background(), []string{"demo", "--requests", "40", "--seed", "7", "--json"}, env)
	if code != 0 {
		t.Fatalf("exit %d, stderr: %s", code, errb.String())
	}
	var s demo.Summary
	if err := json.Unmarshal(out.Bytes(), &s); err != nil {
		t.Fatalf("stdout is not the JSON summary: %v\n%s", err, out.String())
	}
	if s.Requests != 40 || s.Seed != 7 {
		t.Errorf("requests, seed = %d, %d; want 40, 7", s.Requests, s.Seed)
	}
	for _, o := range []demo.Outcome{s.Llmguard, s.Naive, s.NoRetry} {
		t.Run(o.Client, func(t *testing.T) {
			if o.Served+o.Failed != s.Requests {
				t.Errorf("served %d + failed %d != requests %d", o.Served, o.Failed, s.Requests)
			}
			// A hedge cancelled the moment it started (the call answered) is
			// an attempt the mock may never have received.
			if o.Attempts < o.MockAttempts || o.Attempts > o.MockAttempts+o.Hedges {
				t.Errorf("reported attempts %d, the mock logged %d (hedges %d)", o.Attempts, o.MockAttempts, o.Hedges)
			}
			if o.HedgesWon > o.Hedges {
				t.Errorf("%d hedges won of %d started", o.HedgesWon, o.Hedges)
			}
			if o.Attempts < o.Served+o.Failed {
				t.Errorf("attempts %d < requests %d", o.Attempts, s.Requests)
			}
			served := 0
			for _, n := range o.ServedBy {
				served += n
			}
			failed := 0
			for _, n := range o.Failures {
				failed += n
			}
			if served != o.Served || failed != o.Failed {
				t.Errorf("served_by sums to %d (want %d), failures to %d (want %d)", served, o.Served, failed, o.Failed)
			}
		})
	}
	if s.NoRetry.Attempts != s.Requests || s.NoRetry.Retries != 0 {
		t.Errorf("no-retry made %d attempts, %d retries; want one attempt per request", s.NoRetry.Attempts, s.NoRetry.Retries)
	}
	if s.Llmguard.Served <= s.NoRetry.Served {
		t.Errorf("llmguard served %d, no-retry %d: want more", s.Llmguard.Served, s.NoRetry.Served)
	}
	if len(s.Targets) != len(demo.Targets()) {
		t.Errorf("targets %d, want %d", len(s.Targets), len(demo.Targets()))
	}
}

func TestDemoFlags(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"demo", "--requests", "0"}, 2, "--requests must be"},
		{[]string{"demo", "extra"}, 2, "unexpected argument"},
		{[]string{"demo", "-h"}, 0, "Usage: llmguard demo"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: noEnv}
			if code := MainEnv(context.Background(), tt.args, env); code != tt.code {
				t.Errorf("exit %d, want %d", code, tt.code)
			}
			if !strings.Contains(errb.String(), tt.want) {
				t.Errorf("stderr %q, want %q", errb.String(), tt.want)
			}
		})
	}
}

// TestDemoMetrics: with --metrics-addr the demo serves llmguard's /metrics
// (and the dashboard) after the night until interrupted, counting every
// request of the night.
func TestDemoMetrics(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr lockedBuffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: noEnv}
	code := make(chan int, 1)
	go func() {
		code <- MainEnv(ctx, []string{"demo", "--requests", "20", "--json", "--metrics-addr", "127.0.0.1:0"}, env)
	}()
	re := regexp.MustCompile(`serving (http://127\.0\.0\.1:\d+)/metrics until interrupted`)
	var base string
	for deadline := time.Now().Add(60 * time.Second); base == ""; time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			base = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("the demo never said it serves its metrics:\n%s", stderr.String())
		}
	}
	var s demo.Summary
	if err := json.Unmarshal([]byte(stdout.String()), &s); err != nil {
		t.Fatalf("stdout is not the JSON summary: %v\n%s", err, stdout.String())
	}
	_, b := send(t, "GET", base+"/metrics", "")
	body := string(b)
	total := 0.0
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "llmguard_requests_total{") && strings.Contains(line, `dialect="demo"`) {
			var v float64
			fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &v)
			total += v
		}
	}
	if total != float64(s.Llmguard.Served+s.Llmguard.Failed) || total != 20 {
		t.Errorf("llmguard_requests_total counts %v demo requests, want 20 (served %d, failed %d)", total, s.Llmguard.Served, s.Llmguard.Failed)
	}
	for _, family := range []string{"llmguard_attempts_total{", "llmguard_breaker_state{", "gen_ai_client_token_usage_sum{", "llmguard_cost_usd_total{", "go_goroutines"} {
		if !strings.Contains(body, family) {
			t.Errorf("/metrics has no %s", family)
		}
	}
	if resp, err := http.Get(base + "/ui/"); err != nil || resp.StatusCode != 200 {
		t.Errorf("/ui/: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	cancel()
	if c := <-code; c != 0 {
		t.Errorf("exit code %d after the interrupt\n%s", c, stderr.String())
	}
}
