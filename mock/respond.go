package mock

import (
	"net/http"
	"strconv"
	"time"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/internal/sse"
)

// reply is one request being answered: the request, its route, what it
// asks for and whether the answer has started.
type reply struct {
	s      *Server
	w      http.ResponseWriter
	r      *http.Request
	rt     route
	key    string
	n      uint64 // per-server request number, for ids
	model  string
	stream bool
	chat   *chat
	emb    *embedReq // an embeddings request
	rid    string
	rate   *rateState // what Config.RateLimit announces for this request (nil: none)
	// started: the 200 status line and headers are out (stall, streams).
	started bool
}

// contentType is the success answer's content type.
func (x *reply) contentType() string {
	switch {
	case !x.stream:
		return ctJSON
	case x.rt.dialect == dialectGemini && x.rt.sse:
		return "text/event-stream"
	case x.rt.dialect == dialectGemini:
		return ctGoogle
	}
	return "text/event-stream; charset=utf-8"
}

// start sends the success status and headers, once.
func (x *reply) start() {
	if x.started {
		return
	}
	x.started = true
	x.setHeaders(x.contentType())
	if x.stream {
		h := x.w.Header()
		h["Cache-Control"] = []string{"no-cache"}
		h["Connection"] = []string{"keep-alive"}
	}
	x.w.WriteHeader(http.StatusOK)
}

// stall sends the 200 headers, then keep-alives (SSE comments in streams,
// blank lines in JSON bodies, as DeepSeek does under load) every
// Config.KeepAlive: n of them and then the answer, or with n < 0 until
// the client gives up (or Server.Close, or Config.HangLimit).
func (x *reply) stall(n int) bool {
	x.start()
	ka := []byte("\n")
	if x.stream && x.contentType() != ctGoogle {
		ka = []byte(": keep-alive\n\n")
	}
	rc := http.NewResponseController(x.w)
	deadline := time.NewTimer(x.s.hangMax)
	defer deadline.Stop()
	for i := 0; n < 0 || i < n; i++ {
		if _, err := x.w.Write(ka); err != nil {
			return false
		}
		rc.Flush()
		select {
		case <-x.s.closed:
			return false
		case <-deadline.C:
			return false
		default:
		}
		if x.s.sleep(x.r.Context(), x.s.keepAlive) != nil {
			return false
		}
	}
	return true
}

// appendPadded appends prefix and n in base, zero-padded to width digits.
func appendPadded(b []byte, prefix string, n uint64, width int, base int) []byte {
	b = append(b, prefix...)
	var tmp [24]byte
	d := strconv.AppendUint(tmp[:0], n, base)
	for i := len(d); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, d...)
}

// requestID returns the provider-shaped request id for this reply:
// Anthropic "req_011CMock…" (28 chars like the real ones), OpenAI and Azure
// "req_" + 32 hex digits, Gemini none.
func (x *reply) requestID() string {
	var buf [40]byte
	switch x.rt.dialect {
	case dialectAnthropic:
		return string(appendPadded(buf[:0], "req_011CMock", x.n, 16, 10))
	case dialectOpenAI, dialectAzure:
		return string(appendPadded(buf[:0], "req_", x.n, 32, 16))
	}
	return ""
}

// appendID appends a message/tool-call id: prefix and the request number.
func (x *reply) appendID(b []byte, prefix string) []byte {
	return appendPadded(b, prefix, x.n, 16, 10)
}

func (x *reply) setHeaders(contentType string) {
	h := x.w.Header()
	if contentType == ctJSON {
		h["Content-Type"] = x.s.ctJSON // shared, never modified
	} else {
		h["Content-Type"] = []string{contentType}
	}
	switch x.rt.dialect {
	case dialectAnthropic:
		h["Request-Id"] = []string{x.rid}
	case dialectOpenAI:
		h["X-Request-Id"] = []string{x.rid}
	case dialectAzure:
		rid := []string{x.rid}
		h["X-Request-Id"] = rid
		h["Apim-Request-Id"] = rid
	}
	x.rateHeaders(h)
}

func (x *reply) host() string {
	switch x.rt.dialect {
	case dialectAnthropic:
		return "api.anthropic.com"
	case dialectGemini:
		return "generativelanguage.googleapis.com"
	case dialectAzure:
		return "mock.openai.azure.com"
	}
	return "api.openai.com"
}

// hold keeps the request open without writing until the client gives up,
// Server.Close or Config.HangLimit, then drops the connection.
func (x *reply) hold() { x.holdFor(x.s.hangMax) }

// holdFor keeps the request open without writing for d, or until the client
// gives up or Server.Close, then drops the connection.
func (x *reply) holdFor(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-x.r.Context().Done():
	case <-x.s.closed:
	case <-t.C:
	}
	panic(http.ErrAbortHandler)
}

// serve answers with step st.
func (x *reply) serve(st Step) {
	x.rid = x.requestID()
	kind := st.kind()
	if x.rt.endpoint == endpointModels && (kind == KindMidstream || kind == KindTruncated || kind == KindStall || kind == KindStuck) {
		kind = KindOK
	}
	switch kind {
	case KindOK, KindMidstream, KindTruncated, KindStall, KindStuck, KindLong, KindMalformed:
		x.s.record(x, st.String(), http.StatusOK)
	case KindReset, KindHang, KindSilent:
		x.s.record(x, st.String(), 0)
	default:
		t := x.s.cat.lookup(x.rt.dialect, kind)
		x.s.record(x, st.String(), statusOf(t, st))
	}
	if st.Latency > 0 {
		if x.s.sleep(x.r.Context(), st.Latency) != nil {
			return
		}
	}
	switch kind {
	case KindOK, KindMidstream, KindTruncated, KindStuck, KindLong, KindMalformed:
		if x.rt.endpoint == endpointModels {
			x.setHeaders(ctJSON)
			x.w.Write(x.s.models[x.rt.dialect])
			return
		}
		x.success(kind, st)
	case KindStall:
		if x.rt.endpoint == endpointModels {
			kind = KindOK
		}
		n := -1
		if st.HasArg {
			n = st.Arg
		}
		if !x.stall(n) {
			panic(http.ErrAbortHandler)
		}
		if x.rt.endpoint == endpointModels {
			x.w.Write(x.s.models[x.rt.dialect])
			return
		}
		x.success(KindOK, st)
	case KindReset:
		reset(x.w)
	case KindHang:
		x.hold()
	case KindSilent:
		x.silent(st)
	default:
		x.writeTemplate(x.s.cat.lookup(x.rt.dialect, kind), st)
	}
}

func statusOf(t *errTemplate, st Step) int {
	if st.Status != 0 {
		return st.Status
	}
	return t.status
}

// serveTemplate records and writes an error template outside the scenario.
func (x *reply) serveTemplate(t *errTemplate, st Step, fault string) {
	x.rid = x.requestID()
	x.s.record(x, fault, t.status)
	x.writeTemplate(t, st)
}

func (x *reply) writeTemplate(t *errTemplate, st Step) {
	v := tvars{rid: x.rid, model: x.model, key4: last4(x.key), host: x.host(), retry: st.arg(t.retry), json: t.isJSON, now: x.s.now()}
	h := x.w.Header()
	x.setHeaders(t.contentType)
	hasRetry := false
	hv := tvars{retry: v.retry, now: v.now}
	for _, hd := range t.hdrs {
		if hd.name == "Retry-After" {
			hasRetry = true
		}
		h[hd.name] = []string{string(render(nil, hd.value, &hv))}
	}
	if st.HasArg && !hasRetry {
		h.Set("Retry-After", strconv.Itoa(st.Arg))
	}
	x.rateHeaders(h) // what the mock's rate limit says, over the template's

	body := render(make([]byte, 0, 512), t.body, &v)
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	x.w.WriteHeader(statusOf(t, st))
	x.w.Write(body)
}

// success writes a success response, cut short for truncated and midstream.
func (x *reply) success(kind string, st Step) {
	c := x.chat
	text := ""
	var tl *tool
	if x.emb == nil {
		if tl = c.pickTool(); tl == nil {
			text = answerText(c)
		}
	}
	long := time.Duration(st.arg(40)) * time.Second // KindLong's generation time
	if !x.stream {
		if kind == KindLong && x.s.sleep(x.r.Context(), long) != nil {
			return
		}
		var body []byte
		switch {
		case x.emb != nil:
			body = x.embeddingsBody()
		case x.rt.dialect == dialectAnthropic:
			body = x.anthropicMessage(text, tl)
		case x.rt.dialect == dialectGemini:
			body = x.geminiResponse(text, tl)
		default:
			if x.rt.responses {
				body = x.responsesObject(text, tl)
			} else {
				body = x.openaiCompletion(text, tl)
			}
		}
		if !x.started {
			x.setHeaders(ctJSON)
		}
		if kind == KindTruncated || kind == KindMidstream || kind == KindStuck {
			if !x.started {
				x.w.Header()["Content-Length"] = []string{strconv.Itoa(len(body))}
			}
			x.w.Write(body[:len(body)/2])
			http.NewResponseController(x.w).Flush()
			if kind == KindStuck {
				x.hold()
			}
			panic(http.ErrAbortHandler)
		}
		x.w.Write(body)
		return
	}
	cut := -1 // tokens before the stream stops
	switch kind {
	case KindMidstream:
		cut = st.arg(3)
	case KindTruncated:
		cut = st.arg(2)
	case KindStuck:
		cut = st.arg(3)
	}
	s := &streamer{x: x, cut: cut, fail: kind == KindMidstream, stuck: kind == KindStuck, garble: -1}
	if kind == KindMalformed {
		s.garble = st.arg(2)
	}
	if kind == KindLong {
		// One delta per token (a tool call: three), then the end: the
		// first at once, the others spread over the generation time.
		n := 3
		if tl == nil {
			n = countTokens(text)
		}
		s.pace = long / time.Duration(max(n, 1))
	}
	switch x.rt.dialect {
	case dialectAnthropic:
		s.anthropic(text, tl)
	case dialectGemini:
		s.gemini(text, tl)
	default:
		if x.rt.responses {
			s.responses(text, tl)
		} else {
			s.openai(text, tl)
		}
	}
}

// streamer writes one stream, stopping after cut content deltas (cut < 0:
// never) with an in-stream error (fail) or a dropped connection.
type streamer struct {
	x     *reply
	sw    *sse.Writer
	cut   int
	sent  int
	fail  bool
	stuck bool // at the cut, go silent instead of failing
	array bool // Gemini without alt=sse: a JSON array
	first bool
	seq   int           // the next sequence_number of a Responses API stream
	pace  time.Duration // KindLong: the wait before each delta after the first
	// garble: after this many deltas, one event of invalid JSON (KindMalformed; < 0: none)
	garble int
}

// delta reports whether another content delta may be sent; at the cut it
// writes the failure and returns false.
func (s *streamer) delta() bool {
	if s.cut >= 0 && s.sent >= s.cut {
		s.stop()
		return false
	}
	if s.garble >= 0 && s.sent == s.garble {
		s.garbled()
	}
	if s.pace > 0 && s.sent > 0 {
		if err := s.x.s.sleep(s.x.r.Context(), s.pace); err != nil {
			panic(http.ErrAbortHandler) // the client gave up
		}
	}
	s.sent++
	return true
}

// stop ends the stream at the cut.
func (s *streamer) stop() {
	if s.stuck {
		s.x.hold()
	}
	if s.fail {
		x := s.x
		switch x.rt.dialect {
		case dialectAnthropic:
			b := append([]byte(`{"type":"error","error":{"details":null,"type":"overloaded_error","message":"Overloaded"},"request_id":`), json.AppendEscape(nil, x.rid, 0)...)
			s.sw.Event("error", append(b, '}'))
		case dialectGemini:
			s.data([]byte(`{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`))
			if s.array {
				x.w.Write([]byte("]"))
			}
		default:
			if x.rt.responses {
				s.respStreamError()
				return
			}
			if x.rt.provider == "openrouter" {
				// OpenRouter: a chunk with error and finish_reason "error", then [DONE].
				b := append([]byte(`{"id":"`), x.appendID(nil, "gen-Mock")...)
				b = append(b, `","object":"chat.completion.chunk","created":`...)
				b = strconv.AppendInt(b, x.created(), 10)
				b = append(b, `,"model":`...)
				b = json.AppendEscape(b, x.chat.model, 0)
				b = append(b, `,"provider":"Mock","error":{"code":502,"message":"Provider returned error","metadata":{"provider_name":"Mock","raw":"upstream connection closed"}},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error","native_finish_reason":"error"}]}`...)
				s.sw.Data(b)
				s.sw.Data([]byte("[DONE]"))
				return
			}
			s.sw.Data([]byte(`{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`))
		}
		return
	}
	panic(http.ErrAbortHandler)
}

// data writes one unnamed event (or one JSON array element for Gemini
// without alt=sse).
func (s *streamer) data(b []byte) {
	if !s.array {
		s.sw.Data(b)
		return
	}
	if s.first {
		s.x.w.Write([]byte("[\n"))
		s.first = false
	} else {
		s.x.w.Write([]byte(",\n"))
	}
	s.x.w.Write(b)
	http.NewResponseController(s.x.w).Flush()
}
