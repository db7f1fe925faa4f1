package overhead

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// This file: the requests and the two load shapes — an open loop at a
// fixed rate, each request timed from when it was due, and a closed loop
// of N clients each sending its next request when the last one ends.

// Bounds on every load, whatever the flags say.
const (
	maxInFlight = 1024             // requests out at once (more wait their turn, and the wait counts)
	maxRate     = 50_000           // requests per second
	drainLimit  = 10 * time.Second // how long a phase waits for its last answers before canceling them
)

// workload is one kind of request, as each path is sent it.
type workload struct {
	urlPath [npaths]string
	body    [npaths][]byte // the gateway is sent a route's name as the model, the others the upstream's
	stream  bool
}

// forPaths is v for the calibration and the proxy, g for the gateway.
func forPaths[T any](v, g T) [npaths]T { return [npaths]T{v, v, g} }

// call sends one request on p and reads the whole answer. firstByte is
// when the answer's first body byte arrived.
func (w *workload) call(ctx context.Context, st *stack, p path) (firstByte time.Time, err error) {
	defer func() {
		if c := st.children[p]; err != nil && c != nil && c.stderr.String() != "" {
			err = fmt.Errorf("%w (its process logged: %s)", err, c.stderr.String())
		}
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, st.base[p]+w.urlPath[p], bytes.NewReader(w.body[p]))
	if err != nil {
		return time.Time{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer bench-key")
	req.Header.Set("X-Api-Key", "bench-key")
	req.Header.Set("Anthropic-Version", "2023-06-01")
	res, err := st.client.Do(req)
	if err != nil {
		return time.Time{}, err
	}
	defer res.Body.Close()
	var buf [16 << 10]byte
	var n int64
	var tail []byte
	for {
		k, rerr := res.Body.Read(buf[:])
		if k > 0 {
			if n == 0 {
				firstByte = time.Now()
			}
			n += int64(k)
			tail = append(tail[:0], buf[max(0, k-32):k]...)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return firstByte, rerr
		}
	}
	switch {
	case res.StatusCode != http.StatusOK:
		return firstByte, fmt.Errorf("%s: status %d", pathNames[p], res.StatusCode)
	case n == 0:
		return firstByte, fmt.Errorf("%s: empty answer", pathNames[p])
	case w.stream && !bytes.Contains(tail, []byte("[DONE]")) && !bytes.Contains(tail, []byte("message_stop")):
		return firstByte, fmt.Errorf("%s: the stream did not end", pathNames[p])
	}
	return firstByte, nil
}

// tally is what one phase measured on one path.
type tally struct {
	requests, errors int
	firstErr         error
	latency          []time.Duration // to the answer's end
	first            []time.Duration // to the answer's first byte
	elapsed          time.Duration
	counters               // spent by the whole process during the phase
	conns            int64 // connections opened to the upstream
}

// add appends o's measurements to t's.
func (t *tally) add(o *tally) {
	t.requests += o.requests
	t.errors += o.errors
	if t.firstErr == nil {
		t.firstErr = o.firstErr
	}
	t.latency = append(t.latency, o.latency...)
	t.first = append(t.first, o.first...)
	t.elapsed += o.elapsed
	t.cpu += o.cpu
	t.allocs += o.allocs
	t.allocBytes += o.allocBytes
	t.peakRSS = max(t.peakRSS, o.peakRSS)
	t.conns += o.conns
}

// failures collects errors from concurrent requests.
type failures struct {
	n     atomic.Int64
	mu    sync.Mutex
	first error
}

func (f *failures) record(err error) {
	if f.n.Add(1) == 1 {
		f.mu.Lock()
		f.first = err
		f.mu.Unlock()
	}
}

// paced sends rate requests per second on p for d, each when it is due,
// and times each from when it was due: a stall delays the clock of every
// request queued behind it, so it cannot hide (no coordinated omission).
func paced(ctx context.Context, st *stack, w *workload, p path, rate float64, d time.Duration) *tally {
	rate = min(rate, maxRate)
	n := max(1, int(rate*d.Seconds()))
	t := &tally{requests: n, latency: make([]time.Duration, n), first: make([]time.Duration, n)}
	start := time.Now()
	ctx, cancel := context.WithDeadline(ctx, start.Add(d+drainLimit))
	defer cancel()
	var fails failures
	var wg sync.WaitGroup
	slots := make(chan struct{}, maxInFlight)
	interval := float64(time.Second) / rate
	sent := 0
send:
	for ; sent < n; sent++ {
		due := start.Add(time.Duration(float64(sent) * interval))
		if wait := time.Until(due); wait > 0 {
			time.Sleep(wait)
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			break send
		}
		wg.Add(1)
		go func(i int, due time.Time) {
			defer wg.Done()
			defer func() { <-slots }()
			fb, err := w.call(ctx, st, p)
			t.latency[i] = time.Since(due)
			if !fb.IsZero() {
				t.first[i] = fb.Sub(due)
			}
			if err != nil {
				fails.record(err)
			}
		}(sent, due)
	}
	wg.Wait()
	t.elapsed = time.Since(start)
	t.latency, t.first = t.latency[:sent], t.first[:sent]
	t.errors = int(fails.n.Load()) + n - sent
	t.firstErr = fails.first
	return t
}

// closed runs conns clients on p for d, each sending its next request
// when its last one is answered, and times each request from its send.
func closed(ctx context.Context, st *stack, w *workload, p path, conns int, d time.Duration) *tally {
	ctx, cancel := context.WithTimeout(ctx, d+drainLimit)
	defer cancel()
	var fails failures
	per := make([]tally, conns)
	start := time.Now()
	end := start.Add(d)
	var wg sync.WaitGroup
	for c := range per {
		wg.Go(func() {
			t := &per[c]
			for time.Now().Before(end) && ctx.Err() == nil {
				t0 := time.Now()
				fb, err := w.call(ctx, st, p)
				t.latency = append(t.latency, time.Since(t0))
				if !fb.IsZero() {
					t.first = append(t.first, fb.Sub(t0))
				}
				t.requests++
				if err != nil {
					fails.record(err)
				}
			}
		})
	}
	wg.Wait()
	t := &tally{}
	for i := range per {
		t.add(&per[i])
	}
	t.elapsed = time.Since(start)
	t.errors = int(fails.n.Load())
	t.firstErr = fails.first
	return t
}

// measure runs one phase on p and adds what p spent during it (see
// stack.counters) and the connections opened to the upstream.
func measure(st *stack, p path, run func() *tally) *tally {
	before, berr := st.counters(p, true)
	conns := st.upstream.accepted.Load()
	t := run()
	t.conns = st.upstream.accepted.Load() - conns
	after, aerr := st.counters(p, false)
	if err := errors.Join(berr, aerr); err != nil {
		t.errors++
		if t.firstErr == nil {
			t.firstErr = fmt.Errorf("reading %s's counters: %w", pathNames[p], err)
		}
		return t
	}
	t.counters = after.minus(before)
	return t
}

// interleave runs rounds of one phase per path, each phase slice long, so
// the three paths share the machine's varying load, and sums each path's
// phases. skip leaves a path out.
func interleave(rounds int, slice time.Duration, skip func(path) bool, phase func(p path, d time.Duration) *tally) (out [npaths]*tally) {
	for p := range npaths {
		out[p] = &tally{}
	}
	for range rounds {
		for p := range npaths {
			if skip == nil || !skip(p) {
				out[p].add(phase(p, slice))
			}
		}
	}
	return out
}

// quantile is the q-quantile of d (0 for none); d is sorted in place.
func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	if !slices.IsSorted(d) {
		slices.Sort(d)
	}
	return d[min(len(d)-1, int(float64(len(d))*q))]
}

// errLoad is returned when a phase's requests failed where none should.
var errLoad = errors.New("requests failed")
