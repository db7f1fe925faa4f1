package demo

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/llmguard/llmguard/resilience"
	"github.com/llmguard/llmguard/telemetry"
	"github.com/llmguard/llmguard/web"
)

// Metrics counts what the llmguard client does during the night, as
// llmguard serve counts its own calls: the engine's events and each
// request (dialect "demo", route "default"), in the families of /metrics,
// and the dashboard's live view. Create it with NewMetrics and pass it in
// Options.Metrics; its handlers serve the numbers during the night and
// after it (the breakers as the night left them). Safe for concurrent
// use. One Metrics counts one Run.
type Metrics struct {
	m    *telemetry.Metrics
	live *web.Live
	eng  atomic.Pointer[resilience.Engine]
}

// NewMetrics returns Metrics over the demo's route, with the Go runtime's
// families.
func NewMetrics() *Metrics {
	d := &Metrics{}
	routes := map[string][]string{"default": Targets()}
	d.live = web.NewLive(routes)
	d.m = telemetry.New(&telemetry.Options{Routes: routes, Runtime: true, Status: d.status})
	return d
}

// status is the engine's view of the targets (none before Run starts it).
func (d *Metrics) status() []resilience.TargetStatus {
	if e := d.eng.Load(); e != nil {
		return e.Status()
	}
	return nil
}

// Handler serves the Prometheus text format (GET /metrics).
func (d *Metrics) Handler() http.Handler { return d.m.Handler() }

// UI serves the live dashboard under /ui/ (see web.Handler).
func (d *Metrics) UI() http.Handler {
	return web.Handler(&web.Options{Live: d.live, Status: d.status, Routes: map[string][]string{"default": Targets()}, Metrics: d.m})
}

// Telemetry returns the underlying metrics (to gather them).
func (d *Metrics) Telemetry() *telemetry.Metrics { return d.m }

// event counts one engine event; a nil *Metrics counts nothing.
func (d *Metrics) event(e resilience.Event) {
	if d != nil {
		d.m.Event(e)
		d.live.Event(e)
	}
}

// request counts one call of the llmguard client that began at start.
func (d *Metrics) request(ctx context.Context, start time.Time, res *resilience.Result, err error) {
	if d != nil {
		d.m.Request(telemetry.ChatRequest(ctx, "demo", "default", start, res, err))
	}
}
