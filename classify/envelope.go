package classify

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"time"
)

// maxBody is how much of a body the classifier parses.
const maxBody = 64 << 10

// envelope is the union of every top-level shape the classifier knows.
type envelope struct {
	Type, Object, Message, Code string
	Err                         errObj
	hasErr                      bool
	ErrStr                      string // xAI's flat form: "error" is a string
	hasErrStr                   bool
	RequestID, Title, Detail    string
	Status                      string
	Retryable, hasRetryable     bool
	RetryAfter, RayID, UserID   string
	BlockReason                 string // Gemini promptFeedback.blockReason
	finishError                 bool   // a choice with finish_reason "error"
	Resp                        errObj // OpenAI Responses response.error
	hasResp                     bool
}

// errObj is the inner "error" object of the OpenAI, Anthropic, Google and
// OpenRouter envelopes.
type errObj struct {
	Type, Message, Code, Status string
	InnerCode                   string // Azure innererror.code
	DetailsErrorCode            string // Anthropic error.details.error_code
	Details                     []gDetail
	Meta                        orMeta
	hasMeta                     bool
	Reasons                     []string // legacy Google errors[].reason
}

// orMeta is OpenRouter's error.metadata.
type orMeta struct {
	Raw, ProviderName, LimitSource, Reason, Reset string
}

// gDetail is one google.rpc.Status detail (ErrorInfo, QuotaFailure, RetryInfo).
type gDetail struct {
	Type, Reason, RetryDelay                                   string
	QuotaLimit, QuotaLimitValue, QuotaResetDelay, QuotaResetAt string
	QuotaIDs                                                   []string
	zeroQuota                                                  bool
}

func decodeEnvelope(p *scanner, env *envelope) {
	p.object(func(k string) {
		switch k {
		case "type":
			env.Type = p.text()
		case "object":
			env.Object = p.text()
		case "message":
			env.Message = p.text()
		case "code":
			env.Code = p.text()
		case "error":
			switch p.peek() {
			case '{':
				env.hasErr = true
				decodeErrObj(p, &env.Err)
			case '"':
				env.hasErrStr = true
				env.ErrStr = p.str()
			default:
				p.skip()
			}
		case "request_id":
			env.RequestID = p.text()
		case "title":
			env.Title = p.text()
		case "detail":
			env.Detail = p.text()
		case "status":
			env.Status = p.text()
		case "retryable":
			switch p.text() {
			case "true":
				env.Retryable, env.hasRetryable = true, true
			case "false":
				env.Retryable, env.hasRetryable = false, true
			}
		case "retry_after":
			env.RetryAfter = p.text()
		case "ray_id":
			env.RayID = p.text()
		case "user_id":
			env.UserID = p.text()
		case "promptFeedback":
			p.object(func(k string) {
				if k == "blockReason" {
					env.BlockReason = p.text()
				} else {
					p.skip()
				}
			})
		case "choices":
			p.array(func(int) {
				p.object(func(k string) {
					if k == "finish_reason" {
						if p.text() == "error" {
							env.finishError = true
						}
					} else {
						p.skip()
					}
				})
			})
		case "response":
			p.object(func(k string) {
				if k == "error" && p.peek() == '{' {
					env.hasResp = true
					decodeErrObj(p, &env.Resp)
				} else {
					p.skip()
				}
			})
		default:
			p.skip()
		}
	})
}

func decodeErrObj(p *scanner, e *errObj) {
	p.object(func(k string) {
		switch k {
		case "type":
			e.Type = p.text()
		case "message":
			e.Message = p.text()
		case "code":
			e.Code = p.text()
		case "status":
			e.Status = p.text()
		case "details":
			switch p.peek() {
			case '{':
				p.object(func(k string) {
					if k == "error_code" {
						e.DetailsErrorCode = p.text()
					} else {
						p.skip()
					}
				})
			case '[':
				p.array(func(int) {
					e.Details = append(e.Details, gDetail{})
					decodeGDetail(p, &e.Details[len(e.Details)-1])
				})
			default:
				p.skip()
			}
		case "metadata":
			if p.peek() != '{' {
				p.skip()
				return
			}
			e.hasMeta = true
			m := &e.Meta
			p.object(func(k string) {
				switch k {
				case "raw":
					m.Raw = p.raw()
				case "provider_name":
					m.ProviderName = p.text()
				case "limit_source":
					m.LimitSource = p.text()
				case "reason":
					m.Reason = p.text()
				case "headers":
					p.object(func(k string) {
						if strings.EqualFold(k, "X-RateLimit-Reset") {
							m.Reset = p.text()
						} else {
							p.skip()
						}
					})
				default:
					p.skip()
				}
			})
		case "innererror":
			p.object(func(k string) {
				if k == "code" {
					e.InnerCode = p.text()
				} else {
					p.skip()
				}
			})
		case "errors":
			p.array(func(int) {
				p.object(func(k string) {
					if k == "reason" {
						e.Reasons = append(e.Reasons, p.text())
					} else {
						p.skip()
					}
				})
			})
		default:
			p.skip()
		}
	})
}

func decodeGDetail(p *scanner, d *gDetail) {
	p.object(func(k string) {
		switch k {
		case "@type":
			d.Type = p.text()
		case "reason":
			d.Reason = p.text()
		case "retryDelay":
			d.RetryDelay = p.text()
		case "metadata":
			p.object(func(k string) {
				switch k {
				case "quota_limit":
					d.QuotaLimit = p.text()
				case "quota_limit_value":
					d.QuotaLimitValue = p.text()
				case "quotaResetDelay":
					d.QuotaResetDelay = p.text()
				case "quotaResetTimeStamp":
					d.QuotaResetAt = p.text()
				default:
					p.skip()
				}
			})
		case "violations":
			p.array(func(int) {
				p.object(func(k string) {
					switch k {
					case "quotaId":
						d.QuotaIDs = append(d.QuotaIDs, p.text())
					case "quotaValue":
						if p.text() == "0" {
							d.zeroQuota = true
						}
					default:
						p.skip()
					}
				})
			})
		default:
			p.skip()
		}
	})
}

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
		// Mistral flat, OpenAI Responses "error" event, OpenAI-style flat
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
	case env.Title != "" || env.Detail != "":
		// RFC 9457 problem+json (Cloudflare 2026 and others)
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
	case env.Message != "":
		// Bedrock {"message":"..."} or a gateway's flat message.
		f.isError = true
		f.message = env.Message
		f.addID(env.Code)
		f.ptype = env.Code
	}
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

// salvageJSON pulls the obvious fields out of a truncated or malformed
// JSON body with plain string scanning.
func salvageJSON(t []byte, f *facts) {
	s := string(t)
	for _, k := range [...]string{"error_code", "reason", "code", "type", "status"} {
		rest := s
		for n := 0; n < 4; n++ {
			v, next := scanStringFieldFrom(rest, k)
			if next < 0 {
				break
			}
			rest = rest[next:]
			if v != "" && v != "error" {
				f.addID(v)
				if f.ptype == "" {
					f.ptype = v
				}
			}
		}
	}
	f.message = scanStringField(s, "message")
	if f.message == "" {
		f.message = s
	}
	f.reqID = scanStringField(s, "request_id")
	f.isError = len(f.ids) > 0 || f.message != ""
}

// scanStringField finds `"key": "value"` in s and returns value (possibly
// cut short when s is truncated).
func scanStringField(s, key string) string {
	v, _ := scanStringFieldFrom(s, key)
	return v
}

// scanStringFieldFrom is scanStringField that also returns the offset just
// past the key it matched, or -1 when the key does not occur.
func scanStringFieldFrom(s, key string) (string, int) {
	pat := `"` + key + `"`
	i := strings.Index(s, pat)
	if i < 0 {
		return "", -1
	}
	next := i + len(pat)
	s = strings.TrimLeft(s[next:], " \t\r\n")
	if !strings.HasPrefix(s, ":") {
		return "", next
	}
	s = strings.TrimLeft(s[1:], " \t\r\n")
	if !strings.HasPrefix(s, `"`) {
		return "", next
	}
	s = s[1:]
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '"' {
			break
		}
		if c == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 'n', 'r', 't':
				b.WriteByte(' ')
			default:
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(c)
	}
	return b.String(), next
}

// isSSE reports whether t looks like a text/event-stream body.
func isSSE(t []byte) bool {
	return bytes.HasPrefix(t, []byte("event:")) || bytes.HasPrefix(t, []byte("data:")) ||
		bytes.HasPrefix(t, []byte(": ")) || bytes.HasPrefix(t, []byte("id:"))
}

// parseSSE scans an event stream for the first event that carries an
// error and records it in f.
func parseSSE(t []byte, f *facts) {
	var name string
	var data []byte
	flush := func() bool {
		defer func() { name, data = "", data[:0] }()
		d := bytes.TrimSpace(data)
		if len(d) == 0 || d[0] != '{' && d[0] != '[' {
			return false
		}
		var ef facts
		if !parseJSON(string(d), &ef, 0) || !ef.isError {
			return false
		}
		_ = name
		ef.format = fmtSSE
		ef.stream = true
		*f = ef
		return true
	}
	for len(t) > 0 {
		var line []byte
		if i := bytes.IndexByte(t, '\n'); i >= 0 {
			line, t = t[:i], t[i+1:]
		} else {
			line, t = t, nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		switch {
		case len(line) == 0:
			if flush() {
				return
			}
		case line[0] == ':':
		case bytes.HasPrefix(line, []byte("event:")):
			name = string(bytes.TrimSpace(line[6:]))
		case bytes.HasPrefix(line, []byte("data:")):
			v := line[5:]
			if len(v) > 0 && v[0] == ' ' {
				v = v[1:]
			}
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, v...)
		}
	}
	if flush() {
		return
	}
	f.format = fmtSSE
	f.stream = true
}

// htmlTitle returns the text of an HTML page's <title>, or its first
// visible words when it has none.
func htmlTitle(t []byte) string {
	// indexFold folds ASCII only, so offsets in s stay valid (strings.ToLower
	// can change byte lengths on non-ASCII or invalid UTF-8).
	s := string(t)
	if i := indexFold(s, "<title"); i >= 0 {
		if j := strings.IndexByte(s[i:], '>'); j >= 0 {
			rest := s[i+j+1:]
			if k := indexFold(rest, "</title"); k >= 0 {
				rest = rest[:k]
			}
			return collapse(htmlUnescape(rest))
		}
	}
	for _, tag := range [...]string{"<h1", "<h2"} {
		if i := indexFold(s, tag); i >= 0 {
			return collapse(stripTags(s[i:]))
		}
	}
	return collapse(stripTags(s))
}

func stripTags(s string) string {
	var b strings.Builder
	in := false
	for i := 0; i < len(s) && b.Len() < 300; i++ {
		switch c := s[i]; {
		case c == '<':
			in = true
			b.WriteByte(' ')
		case c == '>':
			in = false
		case !in:
			b.WriteByte(c)
		}
	}
	return htmlUnescape(b.String())
}

func htmlUnescape(s string) string {
	if !strings.Contains(s, "&") {
		return s
	}
	return strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&quot;", `"`, "&#39;", "'", "&nbsp;", " ").Replace(s)
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
