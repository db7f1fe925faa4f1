package gateway

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
)

// Spend ceilings at the gateway: a request lowers its route's max_cost_usd
// with the x-llmguard-max-cost header (US dollars); an answer says what it
// cost and what its failed attempts wasted in x-llmguard-cost-usd and
// x-llmguard-wasted-usd (a stream's cost is unknown when its headers go, so
// it has only the second), and so does the access log.

// maxCostHeader carries a request's spend ceiling in dollars.
const maxCostHeader = "X-Llmguard-Max-Cost"

// maxCost reads the request's spend ceiling (0 when it sets none).
func maxCost(r *http.Request) (float64, *apiError) {
	v := strings.TrimSpace(r.Header.Get(maxCostHeader))
	if v == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(strings.TrimPrefix(v, "$"), 64)
	if err != nil || f <= 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, errBadRequest(fmt.Sprintf("x-llmguard-max-cost: want a dollar amount above 0 such as 0.05, got %q", headerValue(v)))
	}
	return f, nil
}

// dollars formats an amount for a header: six decimals (a millionth of a
// dollar), trailing zeros dropped.
func dollars(f float64) string {
	if f == 0 {
		return "0" // most answers waste nothing: no allocation
	}
	s := strconv.FormatFloat(f, 'f', 6, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// setCostHeaders sets x-llmguard-cost-usd (unless cost < 0: unknown) and
// x-llmguard-wasted-usd.
func setCostHeaders(h http.Header, cost, wasted float64) {
	v := []string{"", dollars(wasted)} // one allocation; cap 1 each
	if cost >= 0 {
		v[0] = dollars(cost)
		h["X-Llmguard-Cost-Usd"] = v[0:1:1]
	}
	h["X-Llmguard-Wasted-Usd"] = v[1:2:2]
}
