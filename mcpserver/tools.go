package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/internal/mcpcall"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/resilience"
	"github.com/llmguard/llmguard/telemetry"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SummarizeInput is the summarize tool's input.
type SummarizeInput struct {
	Text    string `json:"text" jsonschema:"the text to summarize"`
	Bullets int    `json:"bullets,omitempty" jsonschema:"at most this many bullet points (default 5)"`
	Routing
}

// Routing is what the summarize, ask and chat tools' inputs share: the
// route and a spend ceiling (properties of the input itself in its schema).
type Routing struct {
	Route      string  `json:"route,omitempty" jsonschema:"route name, provider/model, or a model id a route serves (default: the default route)"`
	MaxCostUSD float64 `json:"max_cost_usd,omitempty" jsonschema:"spend ceiling for this call in US dollars; lowers the route's max_cost_usd (default: the route's)"`
}

// AskInput is the ask tool's input.
type AskInput struct {
	Prompt    string `json:"prompt" jsonschema:"the question or instruction"`
	System    string `json:"system,omitempty" jsonschema:"optional system prompt"`
	MaxTokens int    `json:"max_tokens,omitempty" jsonschema:"answer budget in tokens"`
	Routing
}

// ChatMessage is one turn of the chat tool's conversation.
type ChatMessage struct {
	Role    string `json:"role" jsonschema:"user, assistant or system"`
	Content string `json:"content" jsonschema:"the turn's text"`
}

// ChatInput is the chat tool's input.
type ChatInput struct {
	Messages  []ChatMessage `json:"messages" jsonschema:"the conversation, oldest first"`
	MaxTokens int           `json:"max_tokens,omitempty" jsonschema:"answer budget in tokens"`
	Routing
}

// DecodeInput is the decode_error tool's input.
type DecodeInput struct {
	Status   int               `json:"status,omitempty" jsonschema:"HTTP status (0 when no response came)"`
	Body     string            `json:"body,omitempty" jsonschema:"the response body as received"`
	Headers  map[string]string `json:"headers,omitempty" jsonschema:"response headers (request-id, retry-after, rate-limit headers)"`
	Provider string            `json:"provider,omitempty" jsonschema:"provider name, or empty to guess"`
}

// Answer is the structured content of summarize, ask and chat.
type Answer struct {
	// Text is the answer.
	Text string `json:"text"`
	// Model is the "provider/model" that answered ("mcp/<model>" for the client's own model).
	Model string `json:"model"`
	// Attempts counts upstream attempts; Fallbacks counts moves to a next target.
	Attempts  int `json:"attempts"`
	Fallbacks int `json:"fallbacks"`
	// InputTokens and OutputTokens are the answering call's usage.
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	// CostUSD is the answering call's cost from the pricing table.
	CostUSD float64 `json:"cost_usd"`
	// WastedUSD is what the call's attempts that produced nothing cost
	// (answered, then failed before the answer).
	WastedUSD float64 `json:"wasted_usd"`
	// WaitedSeconds is the time spent in backoff.
	WaitedSeconds float64 `json:"waited_seconds"`
	// Cached: an identical earlier call's stored result. Static: a canned answer.
	Cached bool `json:"cached,omitempty"`
	Static bool `json:"static,omitempty"`
	// ClientModel: answered by the MCP client's own model through sampling.
	ClientModel bool `json:"client_model,omitempty"`
}

// Status is llm_status's structured content.
type Status struct {
	Targets  []TargetLine `json:"targets"`
	Failures []string     `json:"recent_failures"`
}

// TargetLine is one target in llm_status.
type TargetLine struct {
	Target    string `json:"target"`
	Breaker   string `json:"breaker"`
	OpenUntil string `json:"open_until,omitempty"`
	Successes int64  `json:"successes"`
	Failures  int64  `json:"failures"`
	Retries   int64  `json:"retries"`
	Fallbacks int64  `json:"fallbacks"`
	LastError string `json:"last_error,omitempty"`
}

func (s *server) addTools() {
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        "summarize",
		Description: "Summarize text in a few bullet points with an LLM, surviving provider outages (retries, fallbacks). A failure returns one line saying what to do.",
	}, toolHandler(s, "summarize", s.summarize))
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        "ask",
		Description: "Ask an LLM one question, surviving provider outages (retries, fallbacks). A failure returns one line saying what to do.",
	}, toolHandler(s, "ask", s.ask))
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        "chat",
		Description: "Continue a conversation with an LLM, surviving provider outages (retries, fallbacks). A failure returns one line saying what to do.",
	}, toolHandler(s, "chat", s.chat))
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        "decode_error",
		Description: "Explain an LLM provider error (status, body, headers): class, retryable, wait, scope, fallback, request id and what to do.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, toolHandler(s, "decode_error", s.decodeError))
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        "llm_status",
		Description: "Show llmguard's targets, circuit-breaker states and recent failures.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, toolHandler(s, "llm_status", s.status))
	s.addBatchTool()
}

func (s *server) summarize(ctx context.Context, req *mcp.CallToolRequest, in SummarizeInput) (Answer, error) {
	if strings.TrimSpace(in.Text) == "" {
		return Answer{}, errors.New("invalid arguments: text is empty; pass the text to summarize")
	}
	n := in.Bullets
	if n <= 0 {
		n = 5
	}
	r := &provider.Request{
		System: fmt.Sprintf("Summarize the user's text in at most %d short bullet points. Answer with the bullet points only.", n),
		Messages: []provider.Message{{Role: provider.RoleUser,
			Content: []provider.Part{{Type: provider.PartText, Text: in.Text}}}},
		MaxTokens: s.cfg.MaxTokens,
	}
	return s.run(ctx, req, "summarize", in.Route, in.MaxCostUSD, r)
}

func (s *server) ask(ctx context.Context, req *mcp.CallToolRequest, in AskInput) (Answer, error) {
	if strings.TrimSpace(in.Prompt) == "" {
		return Answer{}, errors.New("invalid arguments: prompt is empty; pass the question")
	}
	r := &provider.Request{
		System: in.System,
		Messages: []provider.Message{{Role: provider.RoleUser,
			Content: []provider.Part{{Type: provider.PartText, Text: in.Prompt}}}},
		MaxTokens: s.maxTokens(in.MaxTokens),
	}
	return s.run(ctx, req, "ask", in.Route, in.MaxCostUSD, r)
}

func (s *server) chat(ctx context.Context, req *mcp.CallToolRequest, in ChatInput) (Answer, error) {
	r := &provider.Request{MaxTokens: s.maxTokens(in.MaxTokens)}
	var system []string
	for i, m := range in.Messages {
		switch m.Role {
		case "system":
			system = append(system, m.Content)
		case provider.RoleUser, provider.RoleAssistant:
			r.Messages = append(r.Messages, provider.Message{Role: m.Role,
				Content: []provider.Part{{Type: provider.PartText, Text: m.Content}}})
		default:
			return Answer{}, fmt.Errorf("invalid arguments: messages[%d].role is %q; use user, assistant or system", i, m.Role)
		}
	}
	if len(r.Messages) == 0 {
		return Answer{}, errors.New("invalid arguments: messages has no user or assistant turn")
	}
	r.System = strings.Join(system, "\n\n")
	return s.run(ctx, req, "chat", in.Route, in.MaxCostUSD, r)
}

func (s *server) maxTokens(n int) int {
	if n > 0 {
		return n
	}
	return s.cfg.MaxTokens
}

// hooks is what sees one tool call's engine events: progress notifications
// when the client asked for them (p), and a trace span, carried by the
// returned ctx, when tracing is on (nil otherwise).
func (s *server) hooks(ctx context.Context, req *mcp.CallToolRequest, tool string, p *mcpcall.Progress) (context.Context, func(resilience.Event), *telemetry.Span) {
	var onEvent func(resilience.Event)
	if p.Active() {
		onEvent = func(ev resilience.Event) { p.Send(progressMessage(ev)) }
	}
	if s.cfg.Tracer == nil {
		return ctx, onEvent, nil
	}
	var meta telemetry.MetaCarrier
	if req != nil && req.Params != nil {
		meta = telemetry.MetaCarrier(req.Params.Meta)
	}
	ctx, span := s.cfg.Tracer.Start(ctx, "tools/call "+tool, meta)
	if prev := onEvent; prev != nil {
		onEvent = func(ev resilience.Event) { span.Event(ev); prev(ev) }
	} else {
		onEvent = span.Event
	}
	return ctx, onEvent, span
}

// run makes one engine call for an LLM tool; maxCost is the call's spend
// ceiling in dollars (0: the route's).
func (s *server) run(ctx context.Context, req *mcp.CallToolRequest, tool, route string, maxCost float64, r *provider.Request) (Answer, error) {
	if maxCost < 0 || math.IsNaN(maxCost) || math.IsInf(maxCost, 0) {
		return Answer{}, fmt.Errorf("invalid arguments: max_cost_usd is %v; pass a dollar amount above 0, such as 0.05", maxCost)
	}
	if s.cfg.Engine == nil {
		if s.cfg.ConfigError != "" {
			return Answer{}, configError(s.cfg.ConfigError)
		}
		return Answer{}, noKeyError(s.cfg.KeyEnv)
	}
	if a, err := clientAnswer(req); a != nil || err != nil {
		if err != nil {
			return Answer{}, err
		}
		return *a, nil
	}
	if route == "" {
		route = s.cfg.Route
	}
	if s.cfg.Resolve != nil {
		r, err := s.cfg.Resolve(route)
		if err != nil {
			return Answer{}, lineError(classify.Line(err.Error()))
		}
		route = r
	}
	key, err := idempotencyKey(tool, req)
	if err != nil {
		return Answer{}, err
	}
	p := mcpcall.NewProgress(ctx, req, s.log)
	start := time.Now()
	ctx, onEvent, span := s.hooks(ctx, req, tool, p)
	var ttl time.Duration
	if s.cfg.RouteCacheTTL != nil {
		ttl = s.cfg.RouteCacheTTL(route)
	}
	res, cached, err := s.calls.Do(ctx, key, &mcpcall.CallOptions{TTL: ttl}, onEvent, func(ctx context.Context, onEvent func(resilience.Event)) (*resilience.Result, error) {
		// One scope for every caller, as for the dedup of successes.
		call := &resilience.Call{Route: route, Request: r, Timeout: s.cfg.ToolTimeout, OnEvent: onEvent,
			RepeatScope: "mcp", MaxCostUSD: maxCost}
		if dl, ok := ctx.Deadline(); ok {
			call.Timeout = dl.Sub(s.cfg.Now())
		}
		return s.cfg.Engine.Chat(ctx, call)
	})
	p.Close()
	if pe, ok := errors.AsType[*mcpcall.PanicError](err); ok {
		err = panicError("the upstream call", pe.Value)
	}
	if cached {
		r := *res
		r.Cached = true
		res = &r
	}
	s.observe(ctx, route, start, res, err, span)
	if ask := askClient(err); ask != nil {
		return Answer{}, inputNeeded{ask}
	}
	if err != nil {
		if re, ok := errors.AsType[*resilience.RouteError](err); ok && re.Wasted > 0 {
			s.log.Info("mcp llm call failed", "tool", tool, "route", route, "wasted_usd", re.Wasted)
		}
		return Answer{}, s.describe(ctx, err)
	}
	return answer(res), nil
}

// observe counts a tool call's engine call in the metrics.
func (s *server) observe(ctx context.Context, route string, start time.Time, res *resilience.Result, err error, span *telemetry.Span) {
	if s.cfg.Metrics == nil && span == nil {
		return
	}
	r := telemetry.ChatRequest(ctx, "mcp", route, start, res, err)
	s.cfg.Metrics.Request(r)
	span.End(r, 0)
}

func answer(res *resilience.Result) Answer {
	a := Answer{
		Model:         res.Target,
		Attempts:      res.Attempts,
		Fallbacks:     res.Fallbacks,
		CostUSD:       res.Cost,
		WastedUSD:     res.Wasted,
		WaitedSeconds: res.Waited.Seconds(),
		Cached:        res.Cached,
		Static:        res.Static,
	}
	if r := res.Response; r != nil {
		a.Text = r.Text
		a.InputTokens, a.OutputTokens = r.Usage.InputTokens, r.Usage.OutputTokens
	}
	if a.Static {
		a.Text = "[static fallback answer: every configured provider failed]\n" + a.Text
	}
	return a
}

func (s *server) decodeError(ctx context.Context, req *mcp.CallToolRequest, in DecodeInput) (any, error) {
	h := http.Header{}
	for k, v := range in.Headers {
		h.Add(k, v)
	}
	v := s.cfg.Classify(classify.Input{Provider: in.Provider, Status: in.Status, Header: h, Body: []byte(in.Body), Now: s.cfg.Now()})
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("decode_error: encoding the verdict: %w", err)
	}
	return json.RawMessage(b), nil
}

func (s *server) status(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (Status, error) {
	st := Status{Targets: []TargetLine{}, Failures: []string{}}
	if s.cfg.Engine != nil {
		ts := s.cfg.Engine.Status()
		sort.Slice(ts, func(i, j int) bool { return ts[i].Target < ts[j].Target })
		for _, t := range ts {
			tl := TargetLine{Target: t.Target, Breaker: t.Breaker, Successes: t.Successes, Failures: t.Failures,
				Retries: t.Retries, Fallbacks: t.Fallbacks, LastError: classify.Line(t.LastError)}
			if !t.OpenUntil.IsZero() {
				tl.OpenUntil = t.OpenUntil.UTC().Format(time.RFC3339)
			}
			st.Targets = append(st.Targets, tl)
		}
	}
	for _, f := range s.recentFailures() {
		st.Failures = append(st.Failures, fmt.Sprintf("%s %s: %s", f.Time.UTC().Format("15:04:05Z"), f.Tool, f.Line))
	}
	return st, nil
}

func (a Answer) text() string { return a.Text }

func (st Status) text() string {
	var b strings.Builder
	if len(st.Targets) == 0 {
		b.WriteString("no targets yet (no call has run, or no provider is configured)\n")
	}
	for _, t := range st.Targets {
		fmt.Fprintf(&b, "%s: breaker %s", t.Target, t.Breaker)
		if t.OpenUntil != "" {
			fmt.Fprintf(&b, " until %s", t.OpenUntil)
		}
		fmt.Fprintf(&b, "; %d ok, %d failed, %d retries, %d fallbacks", t.Successes, t.Failures, t.Retries, t.Fallbacks)
		if t.LastError != "" {
			fmt.Fprintf(&b, "; last error: %s", t.LastError)
		}
		b.WriteByte('\n')
	}
	if len(st.Failures) > 0 {
		b.WriteString("recent failures:\n")
		for _, f := range st.Failures {
			b.WriteString("  " + f + "\n")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}
