package overhead

import (
	"fmt"
	"time"
)

// Stats is one path's measurements over one kind of phase.
type Stats struct {
	// Requests were sent, Errors of them failed (a status other than 200,
	// a broken or unfinished answer, or no answer within the phase's bound).
	Requests, Errors int
	// P50, P90 and P99 are latencies to the end of the answer; at a fixed
	// rate they run from when each request was due.
	P50, P90, P99 time.Duration
	// FirstP50 and FirstP99 are latencies to the answer's first byte.
	FirstP50, FirstP99 time.Duration
	// Rate is the requests sent per second of the path's phases.
	Rate float64
	// CPU (user and system), Allocs and AllocBytes are what the path's
	// process spent per request during its phases: the proxy's or the
	// gateway's own process; for the calibration, the bench's (the client
	// and the upstream).
	CPU                time.Duration
	Allocs, AllocBytes float64
	// PeakRSS is the highest resident set of the path's process during its
	// phases (0 for the calibration, or where the system cannot tell).
	PeakRSS uint64
	// Conns is the connections opened to the upstream per second: the
	// client's for the calibration, the proxy's or the gateway's otherwise.
	Conns float64
}

// stats summarises a tally.
func stats(t *tally) Stats {
	s := Stats{Requests: t.requests, Errors: t.errors,
		P50: quantile(t.latency, .50), P90: quantile(t.latency, .90), P99: quantile(t.latency, .99),
		FirstP50: quantile(t.first, .50), FirstP99: quantile(t.first, .99), PeakRSS: t.peakRSS}
	if sec := t.elapsed.Seconds(); sec > 0 {
		s.Rate = float64(t.requests) / sec
		s.Conns = float64(t.conns) / sec
	}
	if t.requests > 0 {
		n := float64(t.requests)
		s.CPU = time.Duration(float64(t.cpu) / n)
		s.Allocs, s.AllocBytes = float64(t.allocs)/n, float64(t.allocBytes)/n
	}
	return s
}

// Result is one measurement of the three paths, taken in the same run.
type Result struct {
	// Calibration is the client calling the upstream directly.
	Calibration Stats
	// Proxy is the same load through a plain httputil.ReverseProxy.
	Proxy Stats
	// Gateway is the same load through llmguard's gateway.
	Gateway Stats
}

func result(t [npaths]*tally) Result {
	return Result{Calibration: stats(t[direct]), Proxy: stats(t[proxy]), Gateway: stats(t[guard])}
}

// Added is s (the Proxy's or the Gateway's) with its latencies less the
// calibration's: the latency it adds. Its other figures are its own
// already.
func (r *Result) Added(s Stats) Stats {
	c := r.Calibration
	s.P50, s.P90, s.P99 = s.P50-c.P50, s.P90-c.P90, s.P99-c.P99
	s.FirstP50, s.FirstP99 = s.FirstP50-c.FirstP50, s.FirstP99-c.FirstP99
	return s
}

// err reports the first failed request of r's phases, if any.
func (t *tally) err(what string, p path) error {
	if t.errors == 0 {
		return nil
	}
	return fmt.Errorf("%s, %s: %d of %d %w (first: %v)", what, pathNames[p], t.errors, t.requests, errLoad, t.firstErr)
}
