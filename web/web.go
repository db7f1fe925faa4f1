package web

import (
	"bytes"
	"embed"
	"encoding/base64"
	"encoding/json"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/llmguard/llmguard/internal/defaults"
	"github.com/llmguard/llmguard/resilience"
	"github.com/llmguard/llmguard/telemetry"
)

//go:generate sh -c "GOOS=js GOARCH=wasm go build -trimpath -buildvcs=false -ldflags=-s -o ui/decoder.wasm ./decoder"

//go:embed ui
var files embed.FS

// Options configures Handler. A nil *Options means an empty dashboard.
type Options struct {
	// Live is fed the engine's events (nil = no latencies, no timeline).
	Live *Live
	// Status snapshots the engine's targets (Engine.Status; nil = none).
	Status func() []resilience.TargetStatus
	// Routes are the engine's routes (Engine.Routes).
	Routes map[string][]string
	// Metrics gives each target's tokens and cost (nil = none shown).
	Metrics *telemetry.Metrics
	// Interval between two snapshots on /ui/events (0 = 1s).
	Interval time.Duration
}

// Handler serves the dashboard under /ui/: the page, its scripts, the
// error decoder page (decode.html) and /ui/events, the live snapshots as
// Server-Sent Events. Everything is embedded: no CDN, works offline.
// Safe for concurrent use.
func Handler(o *Options) http.Handler {
	opts := defaults.Copy(o)
	if opts.Interval <= 0 {
		opts.Interval = time.Second
	}
	sub, _ := fs.Sub(files, "ui")
	static := http.StripPrefix("/ui/", http.FileServerFS(sub))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ui", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ui/", http.StatusFound) })
	mux.HandleFunc("GET /ui/events", func(w http.ResponseWriter, r *http.Request) { serveEvents(w, r, &opts) })
	mux.HandleFunc("GET /ui/snapshot", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(snapshot(&opts, time.Now()))
	})
	mux.HandleFunc("GET /ui/decode.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(DecoderPage())
	})
	mux.Handle("GET /ui/", static)
	return headers(mux)
}

// headers sets what every dashboard response carries: the page may load
// only its own scripts, styles and data (no third party, ever).
func headers(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'self' 'unsafe-inline' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data:")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		h.ServeHTTP(w, r)
	})
}

// Target is one target's row on the dashboard.
type Target struct {
	resilience.TargetStatus
	Routes       []string `json:"routes"`
	SuccessRate  *float64 `json:"success_rate"`
	P50ms        *float64 `json:"p50_ms"`
	P99ms        *float64 `json:"p99_ms"`
	InputTokens  float64  `json:"input_tokens"`
	OutputTokens float64  `json:"output_tokens"`
	CostUSD      float64  `json:"cost_usd"`
	WastedUSD    float64  `json:"wasted_usd"`
}

// Snapshot is one update of the dashboard.
type Snapshot struct {
	Time     time.Time           `json:"time"`
	Routes   map[string][]string `json:"routes"`
	Targets  []Target            `json:"targets"`
	Timeline Timeline            `json:"timeline"`
}

func snapshot(o *Options, now time.Time) *Snapshot {
	s := &Snapshot{Time: now.UTC(), Routes: o.Routes, Targets: []Target{}}
	var pct map[string][2]float64
	if o.Live != nil {
		s.Timeline, pct = o.Live.snapshot(now)
	}
	totals := o.Metrics.Totals()
	byRoute := map[string][]string{}
	for r, ts := range o.Routes {
		for _, t := range ts {
			byRoute[t] = append(byRoute[t], r)
		}
	}
	if o.Status == nil {
		return s
	}
	for _, ts := range o.Status() {
		if byRoute[ts.Target] == nil {
			continue // a target only a call named: not shown
		}
		t := Target{TargetStatus: ts, Routes: byRoute[ts.Target]}
		if n := ts.Successes + ts.Failures; n > 0 {
			t.SuccessRate = new(float64(ts.Successes) / float64(n))
		}
		if p, ok := pct[ts.Target]; ok {
			t.P50ms, t.P99ms = new(p[0]), new(p[1])
		}
		tt := totals[ts.Target]
		t.InputTokens, t.OutputTokens, t.CostUSD, t.WastedUSD = tt.InputTokens, tt.OutputTokens, tt.CostUSD, tt.WastedUSD
		s.Targets = append(s.Targets, t)
	}
	return s
}

// serveEvents streams a snapshot at once and then every interval until
// the client goes away.
func serveEvents(w http.ResponseWriter, r *http.Request, o *Options) {
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	tick := time.NewTicker(o.Interval)
	defer tick.Stop()
	for {
		b, err := json.Marshal(snapshot(o, time.Now()))
		if err != nil {
			return
		}
		if _, err := w.Write(append(append([]byte("event: snapshot\ndata: "), b...), "\n\n"...)); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}

var (
	pageOnce sync.Once
	page     []byte
)

// DecoderPage returns the error decoder as one self-contained HTML page:
// its style, script, the Go runtime's wasm_exec.js and the classifier
// compiled to WebAssembly are inline, so it works opened from a file and
// makes no network request at all. llmguard decode --web writes it out.
func DecoderPage() []byte {
	pageOnce.Do(func() {
		read := func(name string) string {
			b, err := files.ReadFile("ui/" + name)
			if err != nil {
				panic("web: embedded " + name + " missing: " + err.Error())
			}
			return string(b)
		}
		wasm, _ := files.ReadFile("ui/decoder.wasm")
		r := strings.NewReplacer(
			`<link rel="stylesheet" href="style.css">`, "<style>\n"+read("style.css")+"</style>",
			`<script src="wasm_exec.js"></script>`, "<script>\n"+read("wasm_exec.js")+"</script>",
			`<script src="decode.js"></script>`, "<script>\n"+read("decode.js")+"</script>",
			`<!--wasm-->`, `<script id="decoder-wasm" type="application/wasm-base64">`+base64.StdEncoding.EncodeToString(wasm)+`</script>`,
		)
		var b bytes.Buffer
		_, _ = r.WriteString(&b, read("decode.html"))
		page = b.Bytes()
	})
	return page
}
