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

// facts is everything the parser extracted from one body.
type facts struct {
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

func (f *facts) addID(s string) {
	if s == "" || slices.Contains(f.ids, s) {
		return
	}
	f.ids = append(f.ids, s)
}

// prependID puts s first among the identifiers (a header that names the
// error kind outranks the body).
func (f *facts) prependID(s string) {
	if s == "" {
		return
	}
	f.ids = slices.Insert(f.ids, 0, s)
}

// parseBody extracts facts from a response body. It never panics and
// reads at most maxBody bytes.
func parseBody(b []byte) facts {
	var f facts
	if len(b) > maxBody {
		b = b[:maxBody]
	}
	t := bytes.TrimSpace(b)
	if len(t) == 0 {
		f.format = fmtEmpty
		return f
	}
	switch {
	case t[0] == '{' || t[0] == '[':
		f.format = fmtJSON
		if !parseJSON(string(t), &f, 0) {
			f = facts{format: fmtJSON}
			salvageJSON(t, &f)
		}
	case isSSE(t):
		f.format = fmtSSE
		parseSSE(t, &f)
	case t[0] == '<':
		f.format = fmtHTML
		f.message = htmlTitle(t)
	default:
		f.format = fmtText
		f.message = string(t)
	}
	return f
}

// parseJSON decodes one JSON body (possibly wrapped in an array) into f.
// It reports whether the JSON was well-formed enough to decode.
func parseJSON(t string, f *facts, depth int) bool {
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
	fromEnvelope(&env, f, depth)
	return true
}

func fromEnvelope(env *envelope, f *facts, depth int) {
	if env.RequestID != "" {
		f.reqID = env.RequestID
	}
	if env.RayID != "" && f.reqID == "" {
		f.reqID = env.RayID
	}
	if env.BlockReason != "" {
		f.blockReason = env.BlockReason
		f.isError = true
		f.ptype = env.BlockReason
		f.message = "prompt blocked: " + env.BlockReason
		f.shape = "gemini"
		return
	}
	switch {
	case env.hasErr:
		fromErrObj(&env.Err, f, depth)
		if env.Type == "error" && f.shape == "" {
			f.shape = "anthropic"
		}
		if env.UserID != "" || env.finishError {
			f.shape = "openrouter"
		}
	case env.hasErrStr:
		// xAI flat: {"code":"<grpc text>","error":"<message>"}
		f.isError = true
		f.shape = "xai"
		f.message = env.ErrStr
		f.addID(env.Code)
		f.ptype = env.Code
	case env.hasResp:
		// OpenAI Responses response.failed
		f.shape = "openai"
		fromErrObj(&env.Resp, f, depth)
	case env.Object == "error" || (env.Type != "" && env.Message != ""):
		fromFlat(env, f)
	case env.Title != "" || env.Detail != "":
		fromProblem(env, f)
	case env.Message != "":
		// Bedrock {"message":"..."} or a gateway's flat message.
		f.isError = true
		f.message = env.Message
		f.addID(env.Code)
		f.ptype = env.Code
	}
}

// fromFlat reads Mistral's flat error, the OpenAI Responses "error" event
// and OpenAI-style flat errors.
func fromFlat(env *envelope, f *facts) {
	f.isError = true
	if env.Object == "error" {
		f.shape = "mistral"
	}
	f.message = env.Message
	f.addID(env.Code)
	if env.Type != "error" {
		f.addID(env.Type)
	}
	f.ptype = firstNonEmpty(env.Code, env.Type)
	if env.Type != "error" && env.Type != "" && !isNumeric(env.Type) && env.Code != "" && isNumeric(env.Code) {
		f.ptype = env.Type
	}
}

// fromProblem reads RFC 9457 problem+json (Cloudflare 2026 and others).
func fromProblem(env *envelope, f *facts) {
	f.isError = true
	f.shape = "problem"
	f.message = strings.Trim(strings.TrimSpace(env.Title+": "+env.Detail), ": ")
	if isNumeric(env.Status) && len(env.Status) <= 4 {
		f.bodyCode, _ = strconv.Atoi(env.Status)
	}
	if env.hasRetryable {
		r := env.Retryable
		f.bodyRetryable = &r
	}
	if d, ok := parseSeconds(env.RetryAfter); ok {
		f.bodyRetryWait = d
	}
	f.ptype = "problem+json"
}

func fromErrObj(e *errObj, f *facts, depth int) {
	f.isError = true
	f.message = e.Message
	if isNumeric(e.Code) && len(e.Code) <= 4 {
		f.bodyCode, _ = strconv.Atoi(e.Code)
	}
	f.addID(e.DetailsErrorCode)
	for i := range e.Details {
		fromGDetail(&e.Details[i], f)
	}
	for _, r := range e.Reasons {
		f.addID(r)
	}
	if !isNumeric(e.Code) {
		f.addID(e.Code)
	}
	f.addID(e.InnerCode)
	gstatus := e.Status
	if isNumeric(gstatus) {
		gstatus = ""
	}
	f.addID(e.Type)
	f.addID(gstatus)
	switch {
	case gstatus != "" && e.Type == "":
		f.shape = "gemini"
		f.ptype = gstatus
	case e.Code != "" && !isNumeric(e.Code):
		f.ptype = e.Code
	case e.Type != "":
		f.ptype = e.Type
	}
	// OpenRouter metadata: the upstream body as a string in metadata.raw.
	if e.hasMeta {
		m := &e.Meta
		f.shape = "openrouter"
		f.limitSource = firstNonEmpty(m.LimitSource, m.Reason)
		f.addID(m.Reason)
		if isNumeric(m.Reset) && len(m.Reset) <= 15 {
			if ms, err := strconv.ParseInt(m.Reset, 10, 64); err == nil && ms > 0 {
				f.resetAt = time.UnixMilli(ms).UTC()
			}
		}
		if raw := strings.TrimSpace(m.Raw); raw != "" {
			mergeInner(raw, f, depth)
		}
	}
	// Double-encoded upstream body inside error.message.
	if msg := strings.TrimSpace(e.Message); len(msg) > 1 && (msg[0] == '{' || msg[0] == '[') {
		mergeInner(msg, f, depth)
	}
}

// mergeInner parses an upstream body embedded as text and lets its more
// specific identifiers and message win. Plain-text upstream messages are
// appended to the outer message.
func mergeInner(raw string, f *facts, depth int) {
	if depth >= 2 {
		return
	}
	if raw[0] != '{' && raw[0] != '[' {
		if f.message == "" || strings.EqualFold(f.message, "Provider returned error") {
			f.message = raw
		} else if !strings.Contains(f.message, raw) {
			f.message += ": " + raw
		}
		return
	}
	var in facts
	if !parseJSON(raw, &in, depth+1) || !in.isError {
		return
	}
	// Inner identifiers go first: they are the upstream's own words.
	outer := f.ids
	f.ids = in.ids
	for _, s := range outer {
		f.addID(s)
	}
	if in.message != "" {
		f.message = in.message
	}
	if in.ptype != "" {
		f.ptype = in.ptype
	}
	if in.bodyCode != 0 && f.bodyCode == 0 {
		f.bodyCode = in.bodyCode
	}
	if in.retryDelay > f.retryDelay {
		f.retryDelay = in.retryDelay
	}
	f.perDay = f.perDay || in.perDay
	f.perMinute = f.perMinute || in.perMinute
	f.limitZero = f.limitZero || in.limitZero
	if f.resetAt.IsZero() {
		f.resetAt = in.resetAt
	}
	if in.resetDelay > f.resetDelay {
		f.resetDelay = in.resetDelay
	}
	if f.reqID == "" {
		f.reqID = in.reqID
	}
}

func fromGDetail(d *gDetail, f *facts) {
	switch {
	case strings.HasSuffix(d.Type, "ErrorInfo"):
		f.addID(d.Reason)
		if d.QuotaLimit != "" {
			markQuotaID(d.QuotaLimit, f)
		}
		if d.QuotaLimitValue == "0" {
			f.limitZero = true
		}
		if d.QuotaResetDelay != "" {
			if dur, ok := ParseDuration(d.QuotaResetDelay); ok {
				f.resetDelay = max(f.resetDelay, dur)
			}
		}
		if d.QuotaResetAt != "" {
			if ts, err := time.Parse(time.RFC3339, d.QuotaResetAt); err == nil {
				f.resetAt = ts.UTC()
			}
		}
	case strings.HasSuffix(d.Type, "QuotaFailure"):
		for _, id := range d.QuotaIDs {
			markQuotaID(id, f)
		}
		if d.zeroQuota {
			f.limitZero = true
		}
	case strings.HasSuffix(d.Type, "RetryInfo"):
		if dur, ok := ParseDuration(d.RetryDelay); ok {
			f.retryDelay = max(f.retryDelay, dur)
		}
	default:
		// Details without @type (gemini-cli#26633 shows {"reason": ...}).
		f.addID(d.Reason)
	}
}

func markQuotaID(id string, f *facts) {
	switch {
	case strings.Contains(id, "PerDay") || strings.Contains(id, "Daily"):
		f.perDay = true
	case strings.Contains(id, "PerMinute"):
		f.perMinute = true
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
