package resilience

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/llmguard/llmguard/provider"
)

// Spend ceilings: a route's max_cost_usd (Route.MaxCostUSD), lowered for one
// call by Call.MaxCostUSD, bounds what the call may spend. Before each
// attempt the engine estimates its cost from the catalogue's prices (the
// prompt at four characters a token, max_tokens out, else
// defaultOutputEstimate) and skips a target whose estimate exceeds what is
// left after what the call's failed attempts cost: a cascade never moves a
// request silently to a model dearer than the ceiling allows. A target
// without a price is never skipped (its cost is unknown). Failed attempts
// cost what the provider bills for nothing: an attempt whose upstream
// answered 2xx and then failed before anything reached the caller (its
// prompt, at the estimate); an error status costs nothing. The result
// reports what the answer cost and what was wasted (Result.Cost and
// Wasted, StreamResult.Wasted, RouteError.Wasted).

// ErrMaxCost is wrapped by the RouteError of a call that made no upstream
// attempt because every target it could try was estimated above its spend
// ceiling: under that ceiling no retry passes (raise it, or shorten the
// prompt or max_tokens).
var ErrMaxCost = errors.New("every target would exceed the call's max_cost_usd")

// maxCostPrefix starts the reason of a target skipped under the ceiling.
const maxCostPrefix = "max_cost_usd: "

// skippedOnly reports whether the call's skips are all for one limit, the
// one whose reasons start with prefix (or fallbacks the rules forbid), at
// least one for the limit.
func (cs *callState) skippedOnly(prefix string) bool {
	n := 0
	for _, s := range cs.skipped {
		switch {
		case strings.HasPrefix(s.Reason, prefix):
			n++
		case !s.Ineligible:
			return false
		}
	}
	return n > 0
}

// usd formats a dollar amount to the millionth, without trailing zeros.
func usd(f float64) string {
	s := strings.TrimRight(strconv.FormatFloat(f, 'f', 6, 64), "0")
	return "$" + strings.TrimSuffix(s, ".")
}

// defaultOutputEstimate is the output a request without max_tokens is
// estimated at, in tokens.
const defaultOutputEstimate = 1024

// ceiling is the call's spend ceiling in dollars (0: none).
func (cs *callState) ceiling() float64 {
	c := cs.rp.maxCost
	if m := cs.c.MaxCostUSD; m > 0 && (c == 0 || m < c) {
		c = m
	}
	return c
}

// estimate is the cost of an attempt of the call on t, and whether t's
// price is known.
func (cs *callState) estimate(t *targetPlan) (float64, bool) {
	req := cs.c.Request
	if !t.priced || req == nil {
		return 0, false
	}
	out := req.MaxTokens
	if out <= 0 {
		out = defaultOutputEstimate
	}
	return t.price.Cost(provider.EstimateTokens(req), out), true
}

// overCeiling says why the call may not attempt t under its ceiling ("" when
// it may).
func (cs *callState) overCeiling(t *targetPlan) string {
	c := cs.ceiling()
	if c <= 0 {
		return ""
	}
	est, ok := cs.estimate(t)
	left := c - cs.wastedUSD()
	if !ok || est <= left {
		return ""
	}
	return fmt.Sprintf("%sabout %s, %s of %s left", maxCostPrefix, usd(est), usd(max(left, 0)), usd(c))
}

// wasteNanos are nano-dollars, so a hedge's branches can add atomically.
const wasteNanos = 1e9

// wastePrompt adds the prompt of a failed attempt on t, which the provider
// billed for nothing (it answered 2xx, then failed).
func (cs *callState) wastePrompt(t *targetPlan) {
	if !t.priced || cs.c.Request == nil {
		return
	}
	d := t.price.Cost(provider.EstimateTokens(cs.c.Request), 0)
	cs.wasted.Add(uint64(math.Round(d * wasteNanos)))
}

// wastedUSD is what the call's failed attempts cost so far.
func (cs *callState) wastedUSD() float64 { return float64(cs.wasted.Load()) / wasteNanos }
