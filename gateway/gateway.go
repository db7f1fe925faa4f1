package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/catalog"
	"github.com/llmguard/llmguard/internal/httpguard"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/resilience"
	"github.com/llmguard/llmguard/state"
	"github.com/llmguard/llmguard/state/memstore"
)

// Engine is what the gateway needs of *resilience.Engine (which implements
// it). Implementations must be safe for concurrent use.
type Engine interface {
	// Chat runs a non-streaming call over its route.
	Chat(ctx context.Context, c *resilience.Call) (*resilience.Result, error)
	// Stream runs a streaming call and returns once the first token arrived.
	Stream(ctx context.Context, c *resilience.Call) (*resilience.StreamResult, error)
	// Status snapshots every target (for /status).
	Status() []resilience.TargetStatus
	// Routes maps each route name to its "provider/model" targets.
	Routes() map[string][]string
}

// DefaultMaxBodyBytes is the default request body limit (10 MiB).
const DefaultMaxBodyBytes = 10 << 20

// Options configures a Server. Engine is required; every other zero value
// means the documented default.
type Options struct {
	// Engine runs the calls.
	Engine Engine
	// Catalog names the configured providers and their types (which
	// provider/model names exist, which providers relay Responses API
	// bodies), the default provider of bare model names, and the models'
	// facts (which targets accept an assistant prefill). Nil means no
	// configured provider beyond the engine's routes, and the built-in
	// model table.
	Catalog *catalog.Catalog
	// Keys are the accepted gateway keys, sent as "Authorization: Bearer
	// <key>" or "x-api-key: <key>" (nil or empty = no authentication).
	Keys []string
	// AllowedOrigins are browser origins ("https://app.example") admitted
	// besides loopback ones; a request from any other page is refused.
	AllowedOrigins []string
	// AllowedHosts are Host names admitted besides loopback ones on a
	// loopback listener (against DNS rebinding).
	AllowedHosts []string
	// MaxBodyBytes bounds a request body (0 = DefaultMaxBodyBytes); larger
	// bodies get 413.
	MaxBodyBytes int64
	// ReadHeaderTimeout bounds reading a request's headers (0 = 10s).
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included (0 = 60s).
	ReadTimeout time.Duration
	// IdleTimeout closes idle keep-alive connections (0 = 120s).
	IdleTimeout time.Duration
	// ShutdownTimeout bounds the wait for in-flight requests on shutdown
	// (0 = 30s); connections still open after it are closed.
	ShutdownTimeout time.Duration
	// StreamIdleTimeout ends a stream whose upstream sent nothing for this
	// long, as a last guard behind the engine's own idle timeout
	// (0 = 2 minutes).
	StreamIdleTimeout time.Duration
	// Now is the clock (nil = time.Now).
	Now func() time.Time
	// Logger receives request failures (nil = slog.Default()).
	Logger *slog.Logger
	// Items keeps the output items of translated Responses API answers, so
	// that a later request's item_reference can name them (nil = an
	// in-process memstore.Items with its default bounds).
	Items state.ItemStore
}

// Server is the OpenAI- and Anthropic-compatible gateway. Create it with New;
// it is safe for concurrent use. The zero value is not usable.
type Server struct {
	eng      Engine
	cat      *catalog.Catalog
	guard    *httpguard.Guard
	maxBody  int64
	opts     Options
	now      func() time.Time
	log      *slog.Logger
	draining atomic.Bool
	bufs     sync.Pool // *[]byte
	routes   map[string][]string
	items    state.ItemStore
}

// New returns a Server. It does not listen; use Handler, AdminHandler or Run.
// It reads the engine's routes once.
func New(opts *Options) (*Server, error) {
	if opts == nil || opts.Engine == nil {
		return nil, errors.New("gateway: Options.Engine is required")
	}
	s := &Server{eng: opts.Engine, cat: opts.Catalog, opts: *opts, now: opts.Now, log: opts.Logger,
		maxBody: opts.MaxBodyBytes, items: opts.Items}
	g, err := httpguard.New(&httpguard.Policy{Keys: opts.Keys, AllowedOrigins: opts.AllowedOrigins,
		AllowedHosts: opts.AllowedHosts, KeyName: "gateway key"})
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	s.guard = g
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBodyBytes
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.items == nil {
		s.items = memstore.NewItems(nil)
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&s.opts.ReadHeaderTimeout, 10*time.Second)
	def(&s.opts.ReadTimeout, 60*time.Second)
	def(&s.opts.IdleTimeout, 120*time.Second)
	def(&s.opts.ShutdownTimeout, 30*time.Second)
	def(&s.opts.StreamIdleTimeout, 2*time.Minute)
	s.bufs.New = func() any { b := make([]byte, 0, 8<<10); return &b }
	s.routes = s.eng.Routes() // fixed for the engine's life: read once
	return s, nil
}

// Handler returns the API handler: POST /v1/chat/completions, POST
// /v1/messages, GET /v1/models (and /v1/models/{id}), plus the admin
// endpoints (/healthz, /readyz, /status) on the same listener. Any other
// path or method gets a JSON 404 or 405 in the path's dialect.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/v1/chat/completions", s.api(DialectOpenAI, s.serveChat))
	mux.Handle("/v1/messages", s.api(DialectAnthropic, s.serveChat))
	mux.Handle("/v1/messages/count_tokens", s.api(DialectAnthropic, s.serveCountTokens))
	mux.Handle("/v1/responses", s.api(DialectResponses, s.serveResponses))
	mux.Handle("/v1/embeddings", s.api(DialectOpenAI, s.serveEmbeddings))
	mux.Handle("/v1/models", s.api(DialectOpenAI, s.serveModels))
	mux.Handle("/v1/models/", s.api(DialectOpenAI, s.serveModel))
	s.admin(mux)
	mux.HandleFunc("/", s.notFound)
	return s.cleanPaths(mux)
}

// AdminHandler returns only the admin endpoints, for a separate listener.
func (s *Server) AdminHandler() http.Handler {
	mux := http.NewServeMux()
	s.admin(mux)
	mux.HandleFunc("/", s.notFound)
	return s.cleanPaths(mux)
}

func (s *Server) admin(mux *http.ServeMux) {
	mux.HandleFunc("GET /healthz", s.adminCheck(false, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, []byte(`{"status":"ok"}`))
	}))
	mux.HandleFunc("GET /readyz", s.adminCheck(false, func(w http.ResponseWriter, r *http.Request) {
		if s.draining.Load() {
			writeJSON(w, http.StatusServiceUnavailable, []byte(`{"status":"draining"}`))
			return
		}
		writeJSON(w, http.StatusOK, []byte(`{"status":"ready"}`))
	}))
	// /status shows last errors, breaker states and other clients' model
	// names: it needs the gateway key when there are keys.
	mux.HandleFunc("GET /status", s.adminCheck(true, func(w http.ResponseWriter, r *http.Request) {
		b, err := json.Marshal(struct {
			Targets []resilience.TargetStatus `json:"targets"`
			Routes  map[string][]string       `json:"routes"`
		}{s.eng.Status(), s.routes})
		if err != nil {
			writeJSON(w, http.StatusInternalServerError, []byte(`{"error":"status unavailable"}`))
			return
		}
		writeJSON(w, http.StatusOK, b)
	}))
}

// adminCheck applies the access policy to an admin endpoint: Host and
// Origin always, the gateway key when needKey.
func (s *Server) adminCheck(needKey bool, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ref := s.guard.CheckSource(r)
		if ref == nil && needKey {
			ref = s.guard.CheckKey(r)
		}
		if ref != nil {
			b := json.AppendEscape([]byte(`{"error":`), ref.Message, 0)
			writeJSON(w, ref.Status, append(b, '}'))
			return
		}
		s.guard.AllowOrigin(w.Header(), r)
		h(w, r)
	}
}

func writeJSON(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	v := []string{"application/json", strconv.Itoa(len(b))} // one allocation; cap 1 each
	h["Content-Type"] = v[0:1:1]
	h["Content-Length"] = v[1:2:2]
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// Run serves the API on ln (and the admin endpoints on adminLn when it is
// not nil, else on ln) until ctx is done, then shuts down gracefully:
// /readyz turns 503, listeners close, and in-flight requests (streams
// included) get ShutdownTimeout to finish. It returns nil after a clean
// shutdown.
func (s *Server) Run(ctx context.Context, ln, adminLn net.Listener) error {
	mk := func(h http.Handler) *http.Server {
		return &http.Server{Handler: h, ReadHeaderTimeout: s.opts.ReadHeaderTimeout,
			ReadTimeout: s.opts.ReadTimeout, IdleTimeout: s.opts.IdleTimeout,
			ErrorLog:    slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
			BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) }}
	}
	servers := []*http.Server{mk(s.Handler())}
	lns := []net.Listener{jsonErrors(ln)}
	if adminLn != nil {
		servers = append(servers, mk(s.AdminHandler()))
		lns = append(lns, jsonErrors(adminLn))
	}
	errc := make(chan error, len(servers))
	for i, srv := range servers {
		go func() { errc <- srv.Serve(lns[i]) }()
	}
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	s.draining.Store(true)
	s.log.Info("gateway: shutting down, finishing in-flight requests", "timeout", s.opts.ShutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownTimeout)
	defer cancel()
	for _, srv := range servers {
		if e := srv.Shutdown(sctx); e != nil {
			_ = srv.Close()
			if err == nil {
				err = fmt.Errorf("gateway: shutdown: %w", e)
			}
		}
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// api wraps an API handler: panic recovery, the access policy (Host and
// Origin, a CORS preflight, JSON bodies only, gateway keys) and the method
// check.
func (s *Server) api(dialect string, h func(w http.ResponseWriter, r *http.Request, dialect string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d := dialect
		models := strings.HasPrefix(r.URL.Path, "/v1/models")
		if d == DialectOpenAI && models && r.Header.Get("anthropic-version") != "" {
			d = DialectAnthropic
		}
		tw := &trackingWriter{ResponseWriter: w}
		logged := s.accessOn(r)
		if logged {
			tw.acc.start = time.Now()
		}
		defer func() {
			v := recover()
			if v != nil && v != http.ErrAbortHandler {
				s.log.Error("gateway: handler panic", "path", r.URL.Path, "panic", fmt.Sprint(v))
				if tw.wrote {
					// Part of a response went out: break the connection so
					// the client sees a failure, never a truncated success.
					v = http.ErrAbortHandler
				} else {
					writeError(tw, d, errInternal("internal gateway error"))
					v = nil
				}
			}
			if logged {
				s.logAccess(r, tw) // the one place a request ends, streams included
			}
			if v != nil {
				panic(v)
			}
		}()
		want := http.MethodPost
		if models {
			want = http.MethodGet
		}
		if s.guard.Preflight(tw, r, want+", OPTIONS") {
			return
		}
		if aerr := s.admit(r, want == http.MethodPost); aerr != nil {
			writeError(tw, d, aerr)
			return
		}
		s.guard.AllowOrigin(tw.Header(), r)
		if r.Method != want {
			tw.Header().Set("Allow", want)
			writeError(tw, d, errMethod(r.Method, want))
			return
		}
		h(tw, r, d)
	})
}

// admit applies the access policy to an API request: where it comes from,
// its body type (when the path takes a JSON body) and its gateway key.
func (s *Server) admit(r *http.Request, jsonBody bool) *apiError {
	if ref := s.guard.CheckSource(r); ref != nil {
		return &apiError{status: ref.Status, kind: kindPermission, message: ref.Message, retry: "false"}
	}
	if jsonBody && r.Method == http.MethodPost {
		if ref := httpguard.CheckJSON(r); ref != nil {
			return &apiError{status: ref.Status, kind: kindInvalidRequest, message: ref.Message, retry: "false"}
		}
	}
	if s.guard.CheckKey(r) != nil {
		return errUnauthorized()
	}
	return nil
}

// idempotencyKey is the request's Idempotency-Key ("" when it has none),
// scoped to its gateway key, so two clients can't replay each other's
// answers, and to the body, so a key reused for a different request runs
// that request instead of replaying another's answer.
func (s *Server) idempotencyKey(r *http.Request, body []byte) string {
	k := r.Header.Get("Idempotency-Key")
	if k == "" {
		return ""
	}
	h := sha256.New()
	if s.guard.NeedsKey() {
		h.Write([]byte(httpguard.PresentedKey(r)))
		h.Write([]byte{0})
	}
	h.Write([]byte(r.URL.Path)) // a stored answer may be in the path's dialect
	h.Write([]byte{0})
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil)[:12]) + ":" + k
}

// trackingWriter records whether the response started, its status, and
// the request's access-log record.
type trackingWriter struct {
	http.ResponseWriter
	wrote  bool
	status int
	acc    access
}

func (t *trackingWriter) WriteHeader(code int) {
	t.wrote = true
	if t.status == 0 && code >= 200 {
		t.status = code
	}
	t.ResponseWriter.WriteHeader(code)
}

func (t *trackingWriter) Write(b []byte) (int, error) {
	t.wrote = true
	if t.status == 0 {
		t.status = http.StatusOK
	}
	return t.ResponseWriter.Write(b)
}

// Flush implements http.Flusher.
func (t *trackingWriter) Flush() {
	t.wrote = true
	if f, ok := t.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (t *trackingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// readBody reads the request body into a pooled buffer, enforcing the limit.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) (*[]byte, *apiError) {
	if r.ContentLength > s.maxBody {
		return nil, errTooLarge(s.maxBody)
	}
	bp := s.bufs.Get().(*[]byte)
	buf := bytes.NewBuffer((*bp)[:0])
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, s.maxBody))
	*bp = buf.Bytes()
	if err != nil {
		s.putBuf(bp)
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, errTooLarge(s.maxBody)
		}
		return nil, errBadRequest("reading request body: " + err.Error())
	}
	return bp, nil
}

func (s *Server) putBuf(bp *[]byte) {
	if cap(*bp) > 1<<20 {
		return
	}
	*bp = (*bp)[:0]
	s.bufs.Put(bp)
}

// resolve maps a client's model name to an engine route: a route name, a
// "provider/model" target of a configured provider, a bare model id that a
// route's target serves, or a bare name sent to default_provider (see
// catalog.Catalog.ResolveModel). The error names both ways to fix an
// unknown name.
func (s *Server) resolve(model string, routes map[string][]string) (string, error) {
	return s.cat.ResolveModel(model, routes)
}

// expand turns per-request fallback names into targets: a route name adds
// its targets, anything else is resolved like a model name.
func (s *Server) expand(names []string, routes map[string][]string) ([]string, error) {
	var out []string
	for _, n := range names {
		if n == "" {
			continue
		}
		if ts, ok := routes[n]; ok {
			out = append(out, ts...)
			continue
		}
		t, err := s.resolve(n, routes)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

func routeNames(routes map[string][]string) []string {
	names := make([]string, 0, len(routes))
	for n := range routes {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// serveChat serves /v1/chat/completions and /v1/messages.
func (s *Server) serveChat(w http.ResponseWriter, r *http.Request, dialect string) {
	bp, aerr := s.readBody(w, r)
	if aerr != nil {
		writeError(w, dialect, aerr)
		return
	}
	var in *inbound
	var err error
	if dialect == DialectAnthropic {
		in, err = decodeAnthropic(*bp)
	} else {
		in, err = decodeOpenAI(*bp)
	}
	idem := s.idempotencyKey(r, *bp)
	s.putBuf(bp)
	if err != nil {
		writeError(w, dialect, errBadRequest(err.Error()))
		return
	}
	if aerr := checkNames(in); aerr != nil {
		accessOf(w).noteModel(headerValue(in.model), in.req.Stream)
		writeError(w, dialect, aerr)
		return
	}
	accessOf(w).noteModel(in.model, in.req.Stream)
	routes := s.routes
	route, err := s.resolve(in.model, routes)
	if err != nil {
		writeError(w, dialect, errUnknownModel(err))
		return
	}
	fallbacks, err := s.expand(in.fallbacks, routes)
	if err != nil {
		writeError(w, dialect, errUnknownModel(err))
		return
	}
	if dialect == DialectAnthropic {
		// Beta features (Claude Code sends several) need their header on
		// an Anthropic target; other dialects never see it.
		if beta := r.Header.Values("Anthropic-Beta"); len(beta) > 0 {
			in.req.Headers = map[string]string{"anthropic-beta": strings.Join(beta, ",")}
		}
	}
	accessOf(w).noteRoute(route)
	if _, m, ok := strings.Cut(route, "/"); ok {
		in.req.Model = m
	} else {
		in.req.Model = in.model
	}
	call := &resilience.Call{Route: route, Request: in.req, Fallbacks: fallbacks,
		IdempotencyKey: idem}
	if in.req.Stream {
		s.serveStream(w, r, in, call)
		return
	}
	res, err := s.eng.Chat(r.Context(), call)
	if err != nil {
		s.fail(w, r, dialect, route, err)
		return
	}
	h := w.Header()
	setResultHeaders(h, dialect, res.Target, res.Attempts, res.Fallbacks, res.Response.RequestID)
	setDropped(h, answerDropped(dialect, res.Response))
	if res.Cached {
		h.Set("X-Llmguard-Cached", "true")
		h.Set("Idempotent-Replayed", "true")
	}
	if res.Static {
		h.Set("X-Llmguard-Static", "true")
	}
	if raw := res.Response.Raw; raw != nil {
		writeJSON(w, http.StatusOK, raw) // relayed: the provider's own answer
		return
	}
	bp = s.bufs.Get().(*[]byte)
	resp := res.Response
	if resp.Model == "" {
		// A copy: a cached response is shared by every replay.
		r := *resp
		_, r.Model, _ = strings.Cut(res.Target, "/")
		resp = &r
	}
	if dialect == DialectAnthropic {
		*bp = appendAnthropicResponse((*bp)[:0], resp, responseID(dialect, resp.ID))
	} else {
		*bp = appendOpenAIResponse((*bp)[:0], resp, responseID(dialect, resp.ID), s.now().Unix())
	}
	writeJSON(w, http.StatusOK, *bp)
	s.putBuf(bp)
}

// fail writes an engine failure (nothing has been sent yet).
func (s *Server) fail(w http.ResponseWriter, r *http.Request, dialect, route string, err error) {
	if r.Context().Err() != nil {
		return // the client went away
	}
	accessOf(w).noteFailure(err)
	e := fromEngine(err, s.now())
	s.log.Warn("gateway: call failed", "route", route, "status", e.status, "err", err.Error())
	writeError(w, dialect, e)
}

// setResultHeaders sets the x-llmguard-* headers and the upstream request
// id. Keys are written in canonical form directly (no per-call
// canonicalisation on the hot path).
// The values share one backing array (one allocation), each sliced with
// capacity 1 so that appending to one copies it, as in http.Header.Clone.
func setResultHeaders(h http.Header, dialect, target string, attempts, fallbacks int, requestID string) {
	target, requestID = headerValue(target), headerValue(requestID)
	v := []string{target, strconv.Itoa(attempts), strconv.Itoa(fallbacks), requestID, requestID}
	h["X-Llmguard-Target"] = v[0:1:1]
	h["X-Llmguard-Attempts"] = v[1:2:2]
	h["X-Llmguard-Fallbacks"] = v[2:3:3]
	if requestID != "" {
		h["X-Llmguard-Upstream-Request-Id"] = v[3:4:4]
		if dialect == DialectAnthropic {
			h["Request-Id"] = v[4:5:5]
		} else {
			h["X-Request-Id"] = v[4:5:5]
		}
	}
}

// responseID keeps the upstream id when it has the dialect's prefix, else
// makes one.
func responseID(dialect, upstream string) string {
	prefix := "chatcmpl-"
	if dialect == DialectAnthropic {
		prefix = "msg_"
	}
	if strings.HasPrefix(upstream, prefix) {
		return upstream
	}
	return prefix + rand.Text()
}

// serveCountTokens answers Anthropic's token-counting endpoint (Claude Code
// calls it) with an estimate, about four characters per token, marked by
// the X-Llmguard-Estimate header: the route's targets may not share a
// tokenizer, and an upstream call would cost a request.
func (s *Server) serveCountTokens(w http.ResponseWriter, r *http.Request, dialect string) {
	bp, aerr := s.readBody(w, r)
	if aerr != nil {
		writeError(w, dialect, aerr)
		return
	}
	in, err := decodeAnthropic(*bp)
	s.putBuf(bp)
	if err != nil {
		writeError(w, dialect, errBadRequest(err.Error()))
		return
	}
	if aerr := checkNames(in); aerr != nil {
		writeError(w, dialect, aerr)
		return
	}
	w.Header().Set("X-Llmguard-Estimate", "true")
	b := append([]byte(`{"input_tokens":`), strconv.Itoa(estimateTokens(in.req))...)
	writeJSON(w, http.StatusOK, append(b, '}'))
}

// estimateTokens estimates a request's input tokens: four characters per
// token plus a few per message, rounded up.
func estimateTokens(req *provider.Request) int {
	chars := len(req.System)
	for _, m := range req.Messages {
		chars += 16
		for _, p := range m.Content {
			chars += len(p.Text)
			if p.ToolCall != nil {
				chars += len(p.ToolCall.Name) + len(p.ToolCall.Arguments)
			}
			if p.ToolResult != nil {
				chars += len(p.ToolResult.Content)
			}
			if p.Image != nil {
				chars += 4 * 1600 // about a megapixel image
			}
		}
	}
	for _, t := range req.Tools {
		chars += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	return (chars + 3) / 4
}

// serveModels lists routes and targets in a shape both SDKs accept.
func (s *Server) serveModels(w http.ResponseWriter, r *http.Request, dialect string) {
	routes := s.routes
	seen := map[string]bool{}
	var ids []string
	for _, n := range routeNames(routes) {
		ids = append(ids, n)
		seen[n] = true
	}
	for _, n := range routeNames(routes) {
		for _, t := range routes[n] {
			if !seen[t] {
				seen[t] = true
				ids = append(ids, t)
			}
		}
	}
	b := []byte(`{"object":"list","data":[`)
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendModel(b, id)
	}
	b = append(b, `],"has_more":false,"first_id":`...)
	if len(ids) > 0 {
		b = json.AppendEscape(b, ids[0], 0)
		b = append(b, `,"last_id":`...)
		b = json.AppendEscape(b, ids[len(ids)-1], 0)
	} else {
		b = append(b, `null,"last_id":null`...)
	}
	b = append(b, '}')
	writeJSON(w, http.StatusOK, b)
}

// eventWriter is the part of *sse.Writer the stream encoders use.
type eventWriter interface {
	Event(name string, data []byte) error
}

var _ io.Writer = (*trackingWriter)(nil)

// clone returns a copy of req whose Messages may be appended to freely.
func clone(req *provider.Request) *provider.Request {
	c := *req
	c.Messages = slices.Clip(slices.Clone(req.Messages))
	c.Passthrough = nil // the copy's messages will differ from the client's body
	return &c
}

// Bounds on what a client names: each name may become engine state (a
// route plan, a target's statistics, a breaker record) and a header value.
const (
	maxModelName   = 256 // bytes of a model or fallback name
	maxFallbacks   = 16  // per-request fallback names
	maxHeaderValue = 512 // bytes of a value copied into a response header
)

// checkNames refuses a request whose model or fallback names are longer
// than maxModelName, or that lists more than maxFallbacks fallbacks.
func checkNames(in *inbound) *apiError {
	if len(in.fallbacks) > maxFallbacks {
		return errBadRequest("too many fallbacks: " + strconv.Itoa(len(in.fallbacks)) + " (at most " + strconv.Itoa(maxFallbacks) + ")")
	}
	for i, n := range append([]string{in.model}, in.fallbacks...) {
		if len(n) > maxModelName {
			what := "model"
			if i > 0 {
				what = "fallback"
			}
			return errBadRequest(what + " name of " + strconv.Itoa(len(n)) + " bytes: at most " +
				strconv.Itoa(maxModelName) + " (" + strconv.Quote(strings.ToValidUTF8(n[:64], "")+"…") + ")")
		}
	}
	return nil
}

// headerValue cuts s to maxHeaderValue bytes on a rune boundary.
func headerValue(s string) string {
	if len(s) <= maxHeaderValue {
		return s
	}
	return strings.ToValidUTF8(s[:maxHeaderValue-3], "") + "…"
}
