package mock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmguard/llmguard/internal/defaults"
	"github.com/llmguard/llmguard/internal/wait"
)

// Endpoints a request can hit.
const (
	endpointGenerate = "generate" // messages, chat completions, generateContent
	endpointModels   = "models"   // GET …/models
)

// FaultHeader selects faults for a request without a scenario file: a
// comma-separated sequence such as "529,529,200". Requests carrying the
// same header value to the same provider advance one shared sequence.
const FaultHeader = "X-Mock-Fault"

// ModelFaultMarker appended to a model name selects faults the same way as
// FaultHeader: model "claude-sonnet-4-5+fault=529,529,200". The mock echoes
// the model without the marker.
const ModelFaultMarker = "+fault="

// Config configures a Server. A nil *Config means all defaults.
type Config struct {
	// Scenario scripts faults; nil is healthy (every request succeeds).
	Scenario *Scenario
	// Seed seeds the random source for fault rates and latency
	// distributions. Zero uses Scenario.Seed, and 1 when that is zero too.
	Seed uint64
	// Logger receives one Info record per request (method, path, provider,
	// model, masked key, fault, status). Nil logs nothing.
	Logger *slog.Logger
	// MaxRequests bounds the in-memory request log; the oldest entries are
	// dropped first. Zero means 10000.
	MaxRequests int
	// AllowNoKey accepts requests without an API key. The zero value
	// answers them with the provider's missing-key error, as the real APIs do.
	AllowNoKey bool
	// HangLimit bounds how long a "hang" fault holds a request when the
	// client never gives up. Zero means 10 minutes.
	HangLimit time.Duration
	// Now returns the current time (timestamps in bodies and the log).
	// Nil means time.Now.
	Now func() time.Time
	// Sleep waits d or until ctx is done (latency faults, keep-alive
	// pacing). Nil uses a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// KeepAlive is the interval between the keep-alives of a "stall"
	// fault. Zero means 1 second.
	KeepAlive time.Duration
	// RateLimit, when set, enforces and announces a request rate per
	// provider and key on generation requests (see RateLimit). Nil: no
	// limit, and no rate-limit headers on successes.
	RateLimit *RateLimit
}

// Request is one entry of the request log, a plain value (safe to copy).
// It never holds an API key, only its last 4 characters.
type Request struct {
	// Seq numbers the requests from 1 (Reset starts again).
	Seq int `json:"seq"`
	// Time is when the request arrived (Config.Now).
	Time time.Time `json:"time"`
	// Method and Path are the HTTP method and URL path.
	Method string `json:"method"`
	Path   string `json:"path"`
	// Provider is anthropic, openai, azure, gemini or a path-prefix name
	// (deepseek for /deepseek/chat/completions).
	Provider string `json:"provider"`
	// Endpoint is "generate", "embeddings" or "models".
	Endpoint string `json:"endpoint"`
	// Model is the requested model, without a +fault= marker.
	Model string `json:"model,omitempty"`
	// Stream reports a streaming request.
	Stream bool `json:"stream,omitempty"`
	// Key is the API key masked to its last 4 characters ("…abcd").
	Key string `json:"key,omitempty"`
	// Fault is the step served ("ok", "529", "rate_limit:2", …).
	Fault string `json:"fault"`
	// Status is the HTTP status sent; 0 for reset, hang and silent.
	Status int `json:"status"`
	// RequestID is the provider request id the mock sent ("" for Gemini).
	RequestID string `json:"request_id,omitempty"`
}

// Server is the fault-injecting fake upstream; it implements http.Handler.
// It is safe for concurrent use. Create it with New.
type Server struct {
	cfg       Config
	sc        *Scenario
	cat       catalog
	noKey     map[string]*errTemplate
	models    map[string][]byte
	ctJSON    []string // the JSON Content-Type value, shared by responses (never modified)
	maxLog    int
	hangMax   time.Duration
	keepAlive time.Duration
	now       func() time.Time
	sleep     func(context.Context, time.Duration) error
	ids       atomic.Uint64
	closed    chan struct{}
	closeOne  sync.Once

	mu       sync.Mutex
	start    time.Time // when the server started or was reset: rules' After/For/Every count from it
	rng      *rand.Rand
	counters map[string]int
	buckets  map[string]*bucket // Config.RateLimit's, by provider and key
	log      []Request          // a ring once full; head is the oldest entry
	head     int
	seq      int
}

// New returns a Server for cfg (nil means defaults: healthy).
func New(cfg *Config) *Server {
	s := &Server{cfg: defaults.Copy(cfg), closed: make(chan struct{}), counters: map[string]int{}}
	s.sc = s.cfg.Scenario
	if s.sc == nil {
		s.sc = &Scenario{Name: "healthy"}
	}
	seed := s.cfg.Seed
	if seed == 0 {
		seed = s.sc.Seed
	}
	if seed == 0 {
		seed = 1
	}
	s.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	s.maxLog = s.cfg.MaxRequests
	if s.maxLog <= 0 {
		s.maxLog = 10000
	}
	s.hangMax = s.cfg.HangLimit
	if s.hangMax <= 0 {
		s.hangMax = 10 * time.Minute
	}
	s.keepAlive = s.cfg.KeepAlive
	if s.keepAlive <= 0 {
		s.keepAlive = time.Second
	}
	s.now = s.cfg.Now
	if s.now == nil {
		s.now = time.Now
	}
	s.sleep = s.cfg.Sleep
	if s.sleep == nil {
		s.sleep = wait.For
	}
	s.start = s.now()
	s.cat = newCatalog()
	s.noKey = map[string]*errTemplate{}
	for _, d := range []string{dialectAnthropic, dialectOpenAI, dialectAzure, dialectGemini} {
		s.noKey[d] = missingKeyTemplate(d)
	}
	s.models = modelLists()
	s.ctJSON = []string{ctJSON}
	return s
}

// Scenario returns the scenario the server runs (never nil).
func (s *Server) Scenario() *Scenario { return s.sc }

// Requests returns a copy of the request log, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, 0, len(s.log))
	out = append(out, s.log[s.head:]...)
	return append(out, s.log[:s.head]...)
}

// Reset clears the request log, every sequence counter and the id counter,
// reseeds the random source and restarts the clock of timed rules (After,
// For, Every), so the server answers as if new.
func (s *Server) Reset() {
	seed := s.cfg.Seed
	if seed == 0 {
		seed = s.sc.Seed
	}
	if seed == 0 {
		seed = 1
	}
	start := s.now()
	s.mu.Lock()
	s.start = start
	s.log = nil
	s.head = 0
	s.seq = 0
	clear(s.counters)
	s.buckets = nil
	s.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	s.ids.Store(0)
	s.mu.Unlock()
}

// Close releases requests held by "hang" faults. The server keeps serving;
// later hangs return at once. Close is idempotent.
func (s *Server) Close() { s.closeOne.Do(func() { close(s.closed) }) }

var errBadFaultSpec = errors.New("bad fault spec")

// specError is a bad fault spec's line for the client, fault names spelt
// with hyphens (ParseStep reads both): a gateway's classifier reads
// "insufficient_quota" or "credit_low" in a 400 as a billing failure and
// opens the key's breaker, where this is the request's fault.
func specError(err error) string {
	msg := err.Error()
	for _, k := range kindNames() {
		if strings.Contains(k, "_") {
			msg = strings.ReplaceAll(msg, k, strings.ReplaceAll(k, "_", "-"))
		}
	}
	return msg
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			if s.cfg.Logger != nil {
				s.cfg.Logger.Error("mock: panic", "path", r.URL.Path, "panic", fmt.Sprint(v))
			}
			http.Error(w, "llmguard mock: internal error", http.StatusInternalServerError)
		}
	}()
	if strings.HasPrefix(r.URL.Path, "/_mock/") {
		s.admin(w, r)
		return
	}
	rt, ok := routeOf(r)
	if !ok {
		writeMockError(w, http.StatusNotFound, "llmguard mock: no endpoint for "+r.Method+" "+r.URL.Path)
		return
	}
	x := &reply{s: s, w: w, r: r, rt: rt, key: apiKey(r, rt.dialect), n: s.ids.Add(1)}
	x.model = rt.model
	x.stream = rt.stream
	var parseErr error
	if rt.endpoint == endpointEmbed {
		var ok bool
		if ok, parseErr = x.parseEmbed(); !ok {
			return // the client went away
		}
	}
	if rt.endpoint == endpointGenerate {
		var ok bool
		if ok, parseErr = x.parseChat(); !ok {
			return // the client went away
		}
	}
	var spec string
	if base, sp, ok := strings.Cut(x.model, ModelFaultMarker); ok {
		x.model, spec = base, sp
		if x.chat != nil {
			x.chat.model = base
		}
	}
	if h := r.Header.Get(FaultHeader); h != "" {
		spec = h
	}
	step, err := s.choose(&x.rt, x.model, spec, x.stream)
	switch {
	case err != nil:
		s.record(x, "bad_fault_spec", http.StatusBadRequest)
		writeMockError(w, http.StatusBadRequest, "llmguard mock: "+specError(err))
		return
	case x.key == "" && !s.cfg.AllowNoKey:
		x.serveTemplate(s.noKey[rt.dialect], Step{Kind: KindBadKey}, "missing_key")
		return
	case parseErr != nil || (x.chat != nil && x.chat.model == ""):
		if step.kind() == KindOK {
			x.serveTemplate(s.cat.lookup(rt.dialect, KindInvalidRequest), Step{Kind: KindInvalidRequest}, "invalid_request")
			return
		}
		if x.chat == nil {
			x.chat = &chat{}
		}
	}
	if s.cfg.RateLimit != nil && s.cfg.RateLimit.Requests > 0 && rt.endpoint != endpointModels {
		if wait, ok := x.takeRate(); !ok {
			step = Step{Kind: KindRateLimit, Arg: int(math.Ceil(wait.Seconds())), HasArg: true}
		}
	}
	x.serve(step)
}

func readBody(r *http.Request) ([]byte, error) {
	if n := r.ContentLength; n >= 0 && n <= 1<<20 {
		b := make([]byte, n)
		if _, err := io.ReadFull(r.Body, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	return io.ReadAll(http.MaxBytesReader(nil, r.Body, 64<<20))
}

// parseChat reads a generation request into x; ok is false when the
// client went away.
func (x *reply) parseChat() (ok bool, parseErr error) {
	body, err := readBody(x.r)
	if err != nil {
		return false, nil
	}
	rt := &x.rt
	switch rt.dialect {
	case dialectAnthropic:
		x.chat, parseErr = parseAnthropic(body)
	case dialectOpenAI, dialectAzure:
		if rt.responses {
			x.chat, parseErr = parseResponses(body)
		} else {
			x.chat, parseErr = parseOpenAI(body)
		}
	case dialectGemini:
		x.chat, parseErr = parseGemini(body, rt.model, rt.stream)
	}
	if x.chat != nil {
		if x.chat.model == "" {
			x.chat.model = rt.model
		}
		x.model, x.stream = x.chat.model, x.chat.stream
	}
	return true, parseErr
}

func (s *Server) record(x *reply, fault string, status int) {
	now := s.now()
	req := Request{Time: now, Method: x.r.Method, Path: x.r.URL.Path, Provider: x.rt.provider,
		Endpoint: x.rt.endpoint, Model: x.model, Stream: x.stream, Fault: fault, Status: status, RequestID: x.rid}
	if x.key != "" {
		req.Key = "…" + last4(x.key)
	}
	s.mu.Lock()
	s.seq++
	req.Seq = s.seq
	if len(s.log) < s.maxLog {
		s.log = append(s.log, req)
	} else { // a ring: overwrite the oldest entry
		s.log[s.head] = req
		s.head = (s.head + 1) % s.maxLog
	}
	s.mu.Unlock()
	if l := s.cfg.Logger; l != nil {
		l.LogAttrs(x.r.Context(), slog.LevelInfo, "mock request",
			slog.String("method", req.Method), slog.String("path", req.Path), slog.String("provider", req.Provider),
			slog.String("model", req.Model), slog.Bool("stream", req.Stream), slog.String("key", req.Key),
			slog.String("fault", fault), slog.Int("status", status))
	}
}

// reset closes the connection with a TCP RST, without a response.
func reset(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
}
