package classify

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"time"
)

// format says what kind of body a response carried.
type format uint8

const (
	fmtEmpty format = iota
	fmtJSON
	fmtSSE
	fmtHTML
	fmtText
)

// bodyReport is what one response body says: its format, the error's
// identifiers, message and request id, and the wait and quota hints it carries.
type bodyReport struct {
	format format
	shape  string // provider family guessed from the body's shape
	// ids are the provider's identifiers in decreasing specificity:
	// details error_code, ErrorInfo reasons, code, innererror code, type, status.
	ids      []string
	ptype    string // the provider type shown in messages
	bodyCode int    // numeric error code inside the body (Google, OpenRouter)
	message  string
	reqID    string

	retryDelay  time.Duration // google.rpc.RetryInfo
	perDay      bool
	perMinute   bool
	limitZero   bool
	resetAt     time.Time     // absolute reset from the body (OpenRouter, Code Assist)
	resetDelay  time.Duration // Code Assist quotaResetDelay
	limitSource string

	bodyRetryable *bool
	bodyRetryWait time.Duration

	blockReason string
	stream      bool // the error came inside a 200 event stream
	isError     bool // the body positively carries an error
}

func (rep *bodyReport) addID(s string) {
	if s == "" || slices.Contains(rep.ids, s) {
		return
	}
	rep.ids = append(rep.ids, s)
}

// prependID puts s first among the identifiers (a header that names the
// error kind outranks the body).
func (rep *bodyReport) prependID(s string) {
	if s == "" {
		return
	}
	rep.ids = slices.Insert(rep.ids, 0, s)
}

// parseBody reads a response body into a bodyReport; own is the envelope
// of the provider named in the Input (envAny when none is). It never
// panics and reads at most maxBody bytes.
func parseBody(b []byte, own envKind) bodyReport {
	var rep bodyReport
	if len(b) > maxBody {
		b = b[:maxBody]
	}
	t := bytes.TrimSpace(b)
	if len(t) == 0 {
		rep.format = fmtEmpty
		return rep
	}
	switch {
	case t[0] == '{' || t[0] == '[':
		rep.format = fmtJSON
		if !parseJSON(string(t), &rep, 0, own) {
			rep = bodyReport{format: fmtJSON}
			salvageJSON(t, &rep)
		}
	case isSSE(t):
		rep.format = fmtSSE
		parseSSE(t, &rep, own)
	case t[0] == '<':
		rep.format = fmtHTML
		rep.message = htmlTitle(t)
	default:
		rep.format = fmtText
		rep.message = string(t)
	}
	return rep
}

// parseJSON decodes one JSON body (possibly wrapped in an array) into rep.
// It reports whether the JSON was well-formed enough to decode.
func parseJSON(t string, rep *bodyReport, depth int, own envKind) bool {
	p := scanner{s: t}
	var env envelope
	if p.peek() == '[' {
		found := false
		p.array(func(i int) {
			if found {
				p.skip()
				return
			}
			var el envelope
			decodeEnvelope(&p, &el)
			if i == 0 || el.hasErr || el.hasErrStr || el.BlockReason != "" {
				env = el
			}
			found = el.hasErr || el.hasErrStr || el.BlockReason != ""
		})
	} else {
		decodeEnvelope(&p, &env)
	}
	if p.bad {
		return false
	}
	fromEnvelope(&env, rep, depth, own)
	return true
}

// envKind names one of the error envelopes fromEnvelope reads.
type envKind uint8

// The envelopes, in the order they are tried when the body carries more
// than one and the Input names no provider that sends one of them.
const (
	envAny      envKind = iota // no preference
	envNested                  // {"error":{...}}: OpenAI, Anthropic, Google, OpenRouter and most others
	envXAI                     // xAI's flat {"code":"...","error":"<message>"}
	envResponse                // OpenAI Responses {"response":{"error":{...}}}
	envFlat                    // Mistral's {"object":"error","message","type","code"}, OpenAI-style flat errors
	envProblem                 // RFC 9457 problem+json
	envMessage                 // Bedrock's bare {"message":"..."}
	nEnv
)

// has reports whether env carries an envelope of kind k.
func (env *envelope) has(k envKind) bool {
	switch k {
	case envNested:
		return env.hasErr
	case envXAI:
		return env.hasErrStr
	case envResponse:
		return env.hasResp
	case envFlat:
		return env.Object == "error" || (env.Type != "" && env.Message != "")
	case envProblem:
		return env.Title != "" || env.Detail != ""
	case envMessage:
		return env.Message != ""
	}
	return false
}

// pick is the envelope of env that speaks for the error: the named
// provider's own (own) when the body carries it, else the first in order.
func (env *envelope) pick(own envKind) envKind {
	if own != envAny && env.has(own) {
		return own
	}
	for k := envNested; k < nEnv; k++ {
		if env.has(k) {
			return k
		}
	}
	return envAny
}

func fromEnvelope(env *envelope, rep *bodyReport, depth int, own envKind) {
	if env.RequestID != "" {
		rep.reqID = env.RequestID
	}
	if env.RayID != "" && rep.reqID == "" {
		rep.reqID = env.RayID
	}
	if env.BlockReason != "" {
		rep.blockReason = env.BlockReason
		rep.isError = true
		rep.ptype = env.BlockReason
		rep.message = "prompt blocked: " + env.BlockReason
		rep.shape = "gemini"
		return
	}
	switch env.pick(own) {
	case envNested:
		fromErrObj(&env.Err, rep, depth)
		if env.Type == "error" && rep.shape == "" {
			rep.shape = "anthropic"
		}
		if env.UserID != "" || env.finishError {
			rep.shape = "openrouter"
		}
	case envXAI:
		// xAI flat: {"code":"<grpc text>","error":"<message>"}
		rep.isError = true
		rep.shape = "xai"
		rep.message = env.ErrStr
		rep.addID(env.Code)
		rep.ptype = env.Code
	case envResponse:
		// OpenAI Responses response.failed
		rep.shape = "openai"
		fromErrObj(&env.Resp, rep, depth)
	case envFlat:
		fromFlat(env, rep)
	case envProblem:
		fromProblem(env, rep)
	case envMessage:
		// Bedrock {"message":"..."} or a gateway's flat message.
		rep.isError = true
		rep.message = env.Message
		rep.addID(env.Code)
		rep.ptype = env.Code
	}
}

// fromFlat reads Mistral's flat error, the OpenAI Responses "error" event
// and OpenAI-style flat errors.
func fromFlat(env *envelope, rep *bodyReport) {
	rep.isError = true
	if env.Object == "error" {
		rep.shape = "mistral"
	}
	rep.message = env.Message
	rep.addID(env.Code)
	if env.Type != "error" {
		rep.addID(env.Type)
	}
	rep.ptype = firstNonEmpty(env.Code, env.Type)
	if env.Type != "error" && env.Type != "" && !isNumeric(env.Type) && env.Code != "" && isNumeric(env.Code) {
		rep.ptype = env.Type
	}
}

// fromProblem reads RFC 9457 problem+json (Cloudflare 2026 and others).
func fromProblem(env *envelope, rep *bodyReport) {
	rep.isError = true
	rep.shape = "problem"
	rep.message = strings.Trim(strings.TrimSpace(env.Title+": "+env.Detail), ": ")
	if isNumeric(env.Status) && len(env.Status) <= 4 {
		rep.bodyCode, _ = strconv.Atoi(env.Status)
	}
	if env.hasRetryable {
		r := env.Retryable
		rep.bodyRetryable = &r
	}
	if d, ok := parseSeconds(env.RetryAfter); ok {
		rep.bodyRetryWait = d
	}
	rep.ptype = "problem+json"
}

func fromErrObj(e *errObj, rep *bodyReport, depth int) {
	rep.isError = true
	rep.message = e.Message
	if isNumeric(e.Code) && len(e.Code) <= 4 {
		rep.bodyCode, _ = strconv.Atoi(e.Code)
	}
	rep.addID(e.DetailsErrorCode)
	for i := range e.Details {
		fromGDetail(&e.Details[i], rep)
	}
	for _, r := range e.Reasons {
		rep.addID(r)
	}
	if !isNumeric(e.Code) {
		rep.addID(e.Code)
	}
	rep.addID(e.InnerCode)
	gstatus := e.Status
	if isNumeric(gstatus) {
		gstatus = ""
	}
	rep.addID(e.Type)
	rep.addID(gstatus)
	switch {
	case gstatus != "" && e.Type == "":
		rep.shape = "gemini"
		rep.ptype = gstatus
	case e.Code != "" && !isNumeric(e.Code):
		rep.ptype = e.Code
	case e.Type != "":
		rep.ptype = e.Type
	}
	// OpenRouter metadata: the upstream body as a string in metadata.raw.
	if e.hasMeta {
		m := &e.Meta
		rep.shape = "openrouter"
		rep.limitSource = firstNonEmpty(m.LimitSource, m.Reason)
		rep.addID(m.Reason)
		if isNumeric(m.Reset) && len(m.Reset) <= 15 {
			if ms, err := strconv.ParseInt(m.Reset, 10, 64); err == nil && ms > 0 {
				rep.resetAt = time.UnixMilli(ms).UTC()
			}
		}
		if raw := strings.TrimSpace(m.Raw); raw != "" {
			mergeInner(raw, rep, depth)
		}
	}
	// Double-encoded upstream body inside error.message.
	if msg := strings.TrimSpace(e.Message); len(msg) > 1 && (msg[0] == '{' || msg[0] == '[') {
		mergeInner(msg, rep, depth)
	}
}

// mergeInner parses an upstream body embedded as text and lets its more
// specific identifiers and message win. Plain-text upstream messages are
// appended to the outer message.
func mergeInner(raw string, rep *bodyReport, depth int) {
	if depth >= 2 {
		return
	}
	if raw[0] != '{' && raw[0] != '[' {
		if rep.message == "" || strings.EqualFold(rep.message, "Provider returned error") {
			rep.message = raw
		} else if !strings.Contains(rep.message, raw) {
			rep.message += ": " + raw
		}
		return
	}
	var in bodyReport
	if !parseJSON(raw, &in, depth+1, envAny) || !in.isError { // the upstream's own body: no provider named
		return
	}
	// Inner identifiers go first: they are the upstream's own words.
	outer := rep.ids
	rep.ids = in.ids
	for _, s := range outer {
		rep.addID(s)
	}
	if in.message != "" {
		rep.message = in.message
	}
	if in.ptype != "" {
		rep.ptype = in.ptype
	}
	if in.bodyCode != 0 && rep.bodyCode == 0 {
		rep.bodyCode = in.bodyCode
	}
	if in.retryDelay > rep.retryDelay {
		rep.retryDelay = in.retryDelay
	}
	rep.perDay = rep.perDay || in.perDay
	rep.perMinute = rep.perMinute || in.perMinute
	rep.limitZero = rep.limitZero || in.limitZero
	if rep.resetAt.IsZero() {
		rep.resetAt = in.resetAt
	}
	if in.resetDelay > rep.resetDelay {
		rep.resetDelay = in.resetDelay
	}
	if rep.reqID == "" {
		rep.reqID = in.reqID
	}
}

func fromGDetail(d *gDetail, rep *bodyReport) {
	switch {
	case strings.HasSuffix(d.Type, "ErrorInfo"):
		rep.addID(d.Reason)
		if d.QuotaLimit != "" {
			markQuotaID(d.QuotaLimit, rep)
		}
		if d.QuotaLimitValue == "0" {
			rep.limitZero = true
		}
		if d.QuotaResetDelay != "" {
			if dur, ok := ParseDuration(d.QuotaResetDelay); ok {
				rep.resetDelay = max(rep.resetDelay, dur)
			}
		}
		if d.QuotaResetAt != "" {
			if ts, err := time.Parse(time.RFC3339, d.QuotaResetAt); err == nil {
				rep.resetAt = ts.UTC()
			}
		}
	case strings.HasSuffix(d.Type, "QuotaFailure"):
		for _, id := range d.QuotaIDs {
			markQuotaID(id, rep)
		}
		if d.zeroQuota {
			rep.limitZero = true
		}
	case strings.HasSuffix(d.Type, "RetryInfo"):
		if dur, ok := ParseDuration(d.RetryDelay); ok {
			rep.retryDelay = max(rep.retryDelay, dur)
		}
	default:
		// Details without @type (gemini-cli#26633 shows {"reason": ...}).
		rep.addID(d.Reason)
	}
}

func markQuotaID(id string, rep *bodyReport) {
	switch {
	case strings.Contains(id, "PerDay") || strings.Contains(id, "Daily"):
		rep.perDay = true
	case strings.Contains(id, "PerMinute"):
		rep.perMinute = true
	}
}

func isNumeric(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
