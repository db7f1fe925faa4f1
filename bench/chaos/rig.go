package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/llmguard/llmguard/catalog"
	"github.com/llmguard/llmguard/mock"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/registry"
	"github.com/llmguard/llmguard/resilience"
)

// upstream is one mock on a loopback port.
type upstream struct {
	m   *mock.Server
	srv *http.Server
	url string
}

func listen(m *mock.Server) (*upstream, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("bench chaos: starting a mock: %w", err)
	}
	u := &upstream{m: m, url: "http://" + ln.Addr().String()}
	u.srv = &http.Server{Handler: m, ReadHeaderTimeout: 10 * time.Second}
	go u.srv.Serve(ln) // returns ErrServerClosed on close
	return u, nil
}

func (u *upstream) close() {
	u.m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = u.srv.Shutdown(ctx)
}

// outcome is one request's end.
type outcome struct {
	full, truncated bool
	start, end      time.Time
	why             string // what a request without a full answer got
	trace           *trace // its attempts, read once every stream has ended
}

// rig is one strategy in one scenario: its own primary and fallback
// mocks, its metered adapters and client, and the requests' outcomes.
type rig struct {
	sc       *Scenario
	strategy *Strategy
	requests int
	primary  *upstream
	fallback *upstream
	stray    *trace
	client   client

	mu       sync.Mutex
	outcomes []outcome
}

func newRig(sc *Scenario, st *Strategy, opt *Options) (*rig, error) {
	r := &rig{sc: sc, strategy: st, requests: opt.Requests, stray: &trace{}}
	cfg := &mock.Config{Scenario: sc.mockScenario(opt.Window), Seed: opt.Seed, KeepAlive: sc.keepAlive}
	if sc.rate != nil {
		cfg.RateLimit = sc.rate(int(float64(opt.Requests) / opt.Window.Seconds()))
	}
	var err error
	if r.primary, err = listen(mock.New(cfg)); err != nil {
		return nil, err
	}
	if r.fallback, err = listen(mock.New(&mock.Config{Seed: opt.Seed})); err != nil {
		r.primary.close()
		return nil, err
	}
	ads, err := registry.Build(map[string]*registry.Settings{
		"anthropic": {APIKey: "sk-ant-bench-placeholder-0000", BaseURL: r.primary.url},
		"openai":    {APIKey: "sk-bench-placeholder-0000", BaseURL: r.fallback.url + "/v1"},
	}, provider.NewHTTPClient(nil))
	if err != nil {
		r.close()
		return nil, fmt.Errorf("bench chaos: %w", err)
	}
	t := targets{primary: r.metered(ads["anthropic"], Primary), fallback: r.metered(ads["openai"], Fallback)}
	if r.client, err = st.open(t, opt.Seed); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

func (r *rig) metered(a provider.Adapter, target string) provider.Adapter {
	p, m, _ := catalog.SplitTarget(target)
	price, _ := (&catalog.Catalog{}).Price(p, m)
	return &meter{Adapter: a, target: target, price: price, stray: r.stray}
}

// reset starts the mocks' clocks (timed rules count from it) and logs.
func (r *rig) reset() {
	r.primary.m.Reset()
	r.fallback.m.Reset()
}

func (r *rig) close() {
	if r.primary != nil {
		r.primary.close()
	}
	if r.fallback != nil {
		r.fallback.close()
	}
}

// do sends request i, reads its stream to the end and records the outcome.
func (r *rig) do(ctx context.Context, i int, want string) {
	tr := &trace{}
	rctx, cancel := context.WithTimeout(withTrace(ctx, tr), Deadline)
	defer cancel()
	start := time.Now()
	var text strings.Builder
	ended := false
	st, err := r.client.stream(rctx, prompt(i))
	if err == nil {
		for {
			var c provider.Chunk
			c, err = st.Recv()
			text.WriteString(c.Text)
			if err != nil {
				ended = errors.Is(err, io.EOF)
				break
			}
		}
		st.Close()
	}
	o := outcome{start: start, end: time.Now(), trace: tr}
	o.full = ended && text.String() == want
	o.truncated = !o.full && text.Len() > 0 || ended && !o.full
	switch {
	case o.full:
	case ended:
		o.why = "wrong answer"
	default:
		o.why = reason(err)
	}
	r.mu.Lock()
	r.outcomes = append(r.outcomes, o)
	r.mu.Unlock()
}

// onWire is the time within [from, to] during which at least one of atts
// was in flight.
func onWire(atts []attempt, from, to time.Time) time.Duration {
	slices.SortFunc(atts, func(a, b attempt) int { return a.start.Compare(b.start) })
	var total time.Duration
	cur := from // the end of the span covered so far
	for _, a := range atts {
		s, e := later(a.start, cur), a.end
		if e.After(to) {
			e = to
		}
		if e.After(s) {
			total += e.Sub(s)
			cur = e
		}
	}
	return total
}

// reason names a failure by its class (or its sentinel, or its text).
func reason(err error) string {
	if errors.Is(err, errHeaderTimeout) {
		return "timeout (headers)"
	}
	if errors.Is(err, errMalformed) {
		return "malformed event"
	}
	if re, ok := errors.AsType[*resilience.RouteError](err); ok {
		if pe := re.Last(); pe != nil {
			return string(pe.Verdict.Class)
		}
		return re.Err.Error()
	}
	if pe := provider.AsError(err); pe != nil {
		return string(pe.Verdict.Class)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "deadline"
	}
	return err.Error()
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// hopeless reports whether a logged fault could never succeed on a retry.
func hopeless(fault string) bool {
	st, err := mock.ParseStep(fault)
	if err != nil {
		return false
	}
	switch st.Kind {
	case mock.KindBadKey, mock.KindCreditLow, mock.KindInsufficientQuota, mock.KindDailyQuota, mock.KindPermission,
		mock.KindNotFound, mock.KindInvalidRequest, mock.KindContextOverflow, mock.KindTooLarge:
		return true
	}
	return false
}

// logged counts m's generation requests, and adds the request id of each
// answered with a hopeless fault to ids.
func logged(m *mock.Server, ids map[string]bool) (attempts int) {
	for _, q := range m.Requests() {
		if q.Endpoint != "generate" {
			continue
		}
		attempts++
		if hopeless(q.Fault) && q.RequestID != "" {
			ids[q.RequestID] = true
		}
	}
	return attempts
}

// wastedOnHopeless counts the attempts answered with one of the hopeless
// request ids that started after an earlier one on the same target had
// ended: the client had been told, and sent it anyway.
func wastedOnHopeless(atts []attempt, ids map[string]bool) int {
	told := map[string]time.Time{} // target → when its first hopeless answer came back
	for _, a := range atts {
		if ids[a.rid] {
			if t, ok := told[a.target]; !ok || a.end.Before(t) {
				told[a.target] = a.end
			}
		}
	}
	n := 0
	for _, a := range atts {
		if t, ok := told[a.target]; ok && ids[a.rid] && a.start.After(t) {
			n++
		}
	}
	return n
}
