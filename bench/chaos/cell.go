package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/llmguard/llmguard/mock"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/registry"
)

// drainTime bounds the wait for the streams a strategy closes after its
// requests returned (a hedge's loser).
const drainTime = 2 * time.Second

// cell sums the rig's outcomes, their attempts and the mocks' logs into
// its cell, once every stream has ended or drainTime has passed.
func (r *rig) cell() Cell {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := Cell{Scenario: r.sc.Name, Strategy: r.strategy.Name, Requests: r.requests}
	for deadline := time.Now().Add(drainTime); r.open() > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	c.Open = r.open()
	var full []time.Duration
	var waited time.Duration
	var all []attempt
	for _, o := range r.outcomes {
		atts, _ := o.trace.snapshot()
		all = append(all, atts...)
		c.Metered += len(atts)
		waited += o.end.Sub(o.start) - onWire(atts, o.start, o.end)
		for _, a := range atts {
			if a.billed {
				c.CostUSD += a.cost
				if !a.ok {
					c.WastedUSD += a.cost
				}
			}
		}
		switch {
		case o.full:
			c.Full++
			full = append(full, o.end.Sub(o.start))
		case o.truncated:
			c.Truncated++
		default:
			c.Errors++
		}
		if o.why != "" {
			if c.Failures == nil {
				c.Failures = map[string]int{}
			}
			c.Failures[o.why]++
		}
	}
	stray, _ := r.stray.snapshot()
	c.Metered += len(stray)
	// A request that never ran (the run was cancelled) is an error.
	c.Errors += c.Requests - len(r.outcomes)
	ids := map[string]bool{}
	for _, u := range []*upstream{r.primary, r.fallback} {
		c.Attempts += logged(u.m, ids)
	}
	c.Hopeless = wastedOnHopeless(append(all, stray...), ids)
	n := float64(max(c.Requests, 1))
	c.Success = round(float64(c.Full)/n, 4)
	c.AttemptsPerRequest = round(float64(c.Attempts)/n, 2)
	c.WaitSeconds = round(waited.Seconds()/n, 3)
	c.P50, c.P99 = quantile(full, c.Requests, 0.5), quantile(full, c.Requests, 0.99)
	return c
}

// open counts the rig's attempts begun and not ended (r.mu held).
func (r *rig) open() int {
	_, n := r.stray.snapshot()
	for _, o := range r.outcomes {
		_, k := o.trace.snapshot()
		n += k
	}
	return n
}

// quantile is the q-quantile in seconds of n durations of which those not
// in got are infinite (-1 when it is one of them).
func quantile(got []time.Duration, n int, q float64) float64 {
	slices.Sort(got)
	i := int(math.Ceil(q*float64(n))) - 1
	if i < 0 || i >= len(got) {
		return -1
	}
	return round(got[i].Seconds(), 3)
}

// answers are the full answers to the prompts, as a healthy mock streams
// them, in prompt order.
func answers() ([]string, error) {
	u, err := listen(mock.New(nil))
	if err != nil {
		return nil, err
	}
	defer u.close()
	ads, err := registry.Build(map[string]*registry.Settings{"anthropic": {APIKey: "sk-ant-bench-placeholder-0000", BaseURL: u.url}},
		provider.NewHTTPClient(nil))
	if err != nil {
		return nil, fmt.Errorf("bench chaos: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out := make([]string, len(prompts))
	for i := range prompts {
		req := prompt(i)
		req.Model = model(Primary)
		st, err := ads["anthropic"].Stream(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("bench chaos: the reference answer: %w", err)
		}
		var b strings.Builder
		for {
			c, err := st.Recv()
			b.WriteString(c.Text)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				st.Close()
				return nil, fmt.Errorf("bench chaos: the reference answer: %w", err)
			}
		}
		st.Close()
		out[i] = b.String()
	}
	return out, nil
}
