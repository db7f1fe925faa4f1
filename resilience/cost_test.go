package resilience_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/llmguard/llmguard/config"
	"github.com/llmguard/llmguard/resilience"
)

// TestSpendCeiling is issue 13's scenario 8: a cascade from a cheap model
// to a dear one. The cheap one (gpt-4.1-mini, $0.40/$1.60 per MTok) fails
// after its stream opened (paid for, nothing produced); the next is
// claude-opus-4-1 ($15/$75), then gpt-4.1 ($2/$8). With max_cost_usd (on
// the route, or lower on the call) the engine estimates each attempt's
// cost from the catalogue before sending (prompt at 4 characters a token,
// max_tokens out) and skips the targets that would exceed what is left
// after what the failed attempts cost; the result says what the answer
// cost and what was wasted. Before, the call moved silently to the dearest
// model.
func TestSpendCeiling(t *testing.T) {
	const (
		cheap = "openai/gpt-4.1-mini+fault=midstream:0"
		dear  = "anthropic/claude-opus-4-1"
		mid   = "openai/gpt-4.1"
	)
	for _, tc := range []struct {
		name         string
		route, call  float64
		want         string // the answering target ("" = the call fails)
		wantSkipDear bool
	}{
		{"no ceiling", 0, 0, dear, false},
		{"route ceiling", 0.02, 0, mid, true},
		{"call ceiling below the route's", 0.5, 0.02, mid, true},
		{"nothing fits", 0.001, 0, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				route := routeOf(cheap, dear, mid)
				route.Retry.MaxAttempts = 1
				route.MaxCostUSD = tc.route
				cfg := routes(route)
				// The fault marker hides the model from the catalogue.
				cfg.Pricing = map[string]config.Price{cheap: {In: 0.4, Out: 1.6}}
				srv, eng := mockStack(t, nil, cfg, nil)
				req := ask(strings.Repeat("a long document ", 250)) // ~1000 tokens in
				req.MaxTokens = 200
				res, err := eng.Chat(context.Background(), &resilience.Call{Request: req, MaxCostUSD: tc.call})
				dearAsked := served(srv, "claude-opus-4-1", 200) > 0
				if tc.want == "" {
					var re *resilience.RouteError
					if !errors.As(err, &re) {
						t.Fatalf("err = %v, want a RouteError", err)
					}
					if !strings.Contains(err.Error(), "max_cost_usd") {
						t.Errorf("error line does not say the ceiling: %s", err)
					}
					if dearAsked {
						t.Error("the dear target was asked")
					}
					return
				}
				if err != nil {
					t.Fatalf("caller got %v, want %s's answer", err, tc.want)
				}
				if res.Target != tc.want {
					t.Errorf("answered by %s, want %s", res.Target, tc.want)
				}
				if dearAsked == tc.wantSkipDear {
					t.Errorf("dear target asked: %v", dearAsked)
				}
				// The failed attempt's prompt was paid for: ~1000 tokens at $0.40/MTok.
				if res.Wasted < 0.0003 || res.Wasted > 0.0006 {
					t.Errorf("wasted $%.6f, want about $0.0004", res.Wasted)
				}
				if res.Cost <= 0 {
					t.Errorf("cost $%.6f", res.Cost)
				}
				t.Logf("%s: cost $%.6f, wasted $%.6f", res.Target, res.Cost, res.Wasted)
			})
		})
	}
	// A ceiling below every target's estimate: no attempt, ErrMaxCost.
	synctest.Test(t, func(t *testing.T) {
		route := routeOf(cheap, dear, mid)
		cfg := routes(route)
		cfg.Pricing = map[string]config.Price{cheap: {In: 0.4, Out: 1.6}}
		srv, eng := mockStack(t, nil, cfg, nil)
		_, err := eng.Chat(context.Background(), &resilience.Call{Request: ask("hello"), MaxCostUSD: 0.00001})
		if !errors.Is(err, resilience.ErrMaxCost) || len(srv.Requests()) != 0 {
			t.Errorf("err = %v after %d requests, want ErrMaxCost and none", err, len(srv.Requests()))
		}
	})
}
