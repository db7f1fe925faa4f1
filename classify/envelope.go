package classify

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"
)

// maxBody is how much of a body the classifier parses.
const maxBody = 64 << 10

// flexString decodes a JSON string, number, bool or null into a string
// without failing on the type (providers disagree on the type of "code").
type flexString string

func (f *flexString) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] == 'n' {
		return nil
	}
	if b[0] == '"' {
		if bytes.IndexByte(b[1:len(b)-1], '\\') < 0 {
			*f = flexString(b[1 : len(b)-1])
			return nil
		}
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return nil
		}
		*f = flexString(s)
		return nil
	}
	if b[0] == '{' || b[0] == '[' {
		return nil
	}
	*f = flexString(b)
	return nil
}

// rawText is a JSON value kept as text: a string's contents, or the raw
// JSON of an object or array (OpenRouter's metadata.raw is either).
type rawText string

func (r *rawText) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] == 'n' {
		return nil
	}
	if b[0] == '"' {
		var s string
		if json.Unmarshal(b, &s) == nil {
			*r = rawText(s)
		}
		return nil
	}
	*r = rawText(b)
	return nil
}

// errField is the "error" member: an object in most envelopes, a plain
// string in xAI's flat form.
type errField struct {
	obj   *errObj
	str   string
	isStr bool
}

func (e *errField) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) == 0 || b[0] == 'n':
		return nil
	case b[0] == '"':
		e.isStr = true
		var s string
		if json.Unmarshal(b, &s) == nil {
			e.str = s
		}
		return nil
	case b[0] == '{':
		e.obj = new(errObj)
		_ = json.Unmarshal(b, e.obj)
		return nil
	}
	return nil
}

// envelope is the union of every top-level shape the classifier knows.
type envelope struct {
	Type           string     `json:"type"`
	Object         string     `json:"object"`
	Message        string     `json:"message"`
	Code           flexString `json:"code"`
	Error          errField   `json:"error"`
	RequestID      flexString `json:"request_id"`
	Title          string     `json:"title"`
	Detail         string     `json:"detail"`
	Status         flexString `json:"status"`
	Retryable      *bool      `json:"retryable"`
	RetryAfter     flexString `json:"retry_after"`
	RayID          string     `json:"ray_id"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	Choices []struct {
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Response *struct {
		Status string  `json:"status"`
		Error  *errObj `json:"error"`
	} `json:"response"`
	UserID string `json:"user_id"`
}

// errObj is the inner "error" object of the OpenAI, Anthropic, Google and
// OpenRouter envelopes.
type errObj struct {
	Type       string          `json:"type"`
	Message    string          `json:"message"`
	Code       flexString      `json:"code"`
	Status     flexString      `json:"status"`
	Param      flexString      `json:"param"`
	Details    json.RawMessage `json:"details"`
	Metadata   *orMeta         `json:"metadata"`
	InnerError *struct {
		Code string `json:"code"`
	} `json:"innererror"`
	Errors []struct {
		Reason string `json:"reason"`
	} `json:"errors"`
}

// orMeta is OpenRouter's error.metadata.
type orMeta struct {
	Raw          rawText `json:"raw"`
	ProviderName string  `json:"provider_name"`
	LimitSource  string  `json:"limit_source"`
	Reason       string  `json:"reason"`
	Headers      struct {
		Reset flexString `json:"X-RateLimit-Reset"`
	} `json:"headers"`
}

// gDetail is one google.rpc.Status detail (ErrorInfo, QuotaFailure,
// RetryInfo, Help), or Anthropic's error.details object.
type gDetail struct {
	Type       string            `json:"@type"`
	Reason     string            `json:"reason"`
	Metadata   map[string]string `json:"metadata"`
	Violations []struct {
		QuotaID    string `json:"quotaId"`
		QuotaValue string `json:"quotaValue"`
	} `json:"violations"`
	RetryDelay string `json:"retryDelay"`
	ErrorCode  string `json:"error_code"`
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
	ids      [8]string
	nids     int
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
	if s == "" || f.nids == len(f.ids) {
		return
	}
	for i := 0; i < f.nids; i++ {
		if f.ids[i] == s {
			return
		}
	}
	f.ids[f.nids] = s
	f.nids++
}

// prependID puts s first among the identifiers (a header that names the
// error kind outranks the body).
func (f *facts) prependID(s string) {
	if s == "" {
		return
	}
	n := min(f.nids, len(f.ids)-1)
	copy(f.ids[1:n+1], f.ids[:n])
	f.ids[0] = s
	f.nids = n + 1
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
		if !parseJSON(t, &f, 0) {
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
func parseJSON(t []byte, f *facts, depth int) bool {
	var env envelope
	if t[0] == '[' {
		var arr []envelope
		if err := json.Unmarshal(t, &arr); err != nil && !isTypeErr(err) {
			return false
		}
		if len(arr) == 0 {
			return true
		}
		env = arr[0]
		if env.Error.obj == nil && !env.Error.isStr {
			for i := range arr {
				if arr[i].Error.obj != nil || arr[i].PromptFeedback != nil {
					env = arr[i]
					break
				}
			}
		}
	} else if err := json.Unmarshal(t, &env); err != nil && !isTypeErr(err) {
		return false
	}
	fromEnvelope(&env, f, depth)
	return true
}

func isTypeErr(err error) bool {
	var te *json.UnmarshalTypeError
	return errors.As(err, &te)
}

func fromEnvelope(env *envelope, f *facts, depth int) {
	if env.RequestID != "" {
		f.reqID = string(env.RequestID)
	}
	if env.RayID != "" && f.reqID == "" {
		f.reqID = env.RayID
	}
	if env.PromptFeedback != nil && env.PromptFeedback.BlockReason != "" {
		f.blockReason = env.PromptFeedback.BlockReason
		f.isError = true
		f.ptype = env.PromptFeedback.BlockReason
		f.message = "prompt blocked: " + env.PromptFeedback.BlockReason
		f.shape = "gemini"
		return
	}
	switch {
	case env.Error.obj != nil:
		fromErrObj(env.Error.obj, f, depth)
		if env.Type == "error" && f.shape == "" {
			f.shape = "anthropic"
		}
		if env.UserID != "" {
			f.shape = "openrouter"
		}
		for _, c := range env.Choices {
			if c.FinishReason == "error" {
				f.shape = "openrouter"
			}
		}
	case env.Error.isStr:
		// xAI flat: {"code":"<grpc text>","error":"<message>"}
		f.isError = true
		f.shape = "xai"
		f.message = env.Error.str
		f.addID(string(env.Code))
		f.ptype = string(env.Code)
	case env.Response != nil && env.Response.Error != nil:
		// OpenAI Responses response.failed
		f.shape = "openai"
		fromErrObj(env.Response.Error, f, depth)
	case env.Object == "error" || (env.Type != "" && env.Message != ""):
		// Mistral flat, OpenAI Responses "error" event, OpenAI-style flat
		f.isError = true
		if env.Object == "error" {
			f.shape = "mistral"
		}
		f.message = env.Message
		f.addID(string(env.Code))
		if env.Type != "error" {
			f.addID(env.Type)
		}
		f.ptype = firstNonEmpty(string(env.Code), env.Type)
		if env.Type != "error" && env.Type != "" && !isNumeric(env.Type) && env.Code != "" && isNumeric(string(env.Code)) {
			f.ptype = env.Type
		}
	case env.Title != "" || env.Detail != "":
		// RFC 9457 problem+json (Cloudflare 2026 and others)
		f.isError = true
		f.shape = "problem"
		f.message = strings.TrimSpace(env.Title + ": " + env.Detail)
		f.message = strings.Trim(f.message, ": ")
		if n, err := strconv.Atoi(string(env.Status)); err == nil {
			f.bodyCode = n
		}
		f.bodyRetryable = env.Retryable
		if d, ok := parseSeconds(string(env.RetryAfter)); ok {
			f.bodyRetryWait = d
		}
		f.ptype = "problem+json"
	case env.Message != "":
		// Bedrock {"message":"..."} or a gateway's flat message.
		f.isError = true
		f.message = env.Message
		f.addID(string(env.Code))
		f.ptype = string(env.Code)
	}
}

func fromErrObj(e *errObj, f *facts, depth int) {
	f.isError = true
	f.message = e.Message
	if n, err := strconv.Atoi(string(e.Code)); err == nil {
		f.bodyCode = n
	}
	// Details: Anthropic object or google.rpc details array.
	if len(e.Details) > 0 {
		switch e.Details[0] {
		case '{':
			var d gDetail
			if json.Unmarshal(e.Details, &d) == nil && d.ErrorCode != "" {
				f.addID(d.ErrorCode)
			}
		case '[':
			var ds []gDetail
			_ = json.Unmarshal(e.Details, &ds)
			for i := range ds {
				fromGDetail(&ds[i], f)
			}
		}
	}
	for _, r := range e.Errors {
		f.addID(r.Reason)
	}
	if !isNumeric(string(e.Code)) {
		f.addID(string(e.Code))
	}
	if e.InnerError != nil {
		f.addID(e.InnerError.Code)
	}
	gstatus := string(e.Status)
	if isNumeric(gstatus) {
		gstatus = ""
	}
	f.addID(e.Type)
	f.addID(gstatus)
	switch {
	case gstatus != "" && e.Type == "":
		f.shape = "gemini"
		f.ptype = gstatus
	case e.Code != "" && !isNumeric(string(e.Code)):
		f.ptype = string(e.Code)
	case e.Type != "":
		f.ptype = e.Type
	}
	// OpenRouter metadata: the upstream body as a string in metadata.raw.
	if m := e.Metadata; m != nil {
		f.shape = "openrouter"
		f.limitSource = firstNonEmpty(m.LimitSource, m.Reason)
		if m.Reason != "" {
			f.addID(m.Reason)
		}
		if ms, err := strconv.ParseInt(string(m.Headers.Reset), 10, 64); err == nil && ms > 0 {
			f.resetAt = time.UnixMilli(ms).UTC()
		}
		if raw := strings.TrimSpace(string(m.Raw)); raw != "" {
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
	if !parseJSON([]byte(raw), &in, depth+1) || !in.isError {
		return
	}
	// Inner identifiers go first: they are the upstream's own words.
	var ids [8]string
	n := copy(ids[:], in.ids[:in.nids])
	outer := f.ids[:f.nids]
	f.ids, f.nids = ids, n
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
		if ql := d.Metadata["quota_limit"]; ql != "" {
			markQuotaID(ql, f)
		}
		if d.Metadata["quota_limit_value"] == "0" {
			f.limitZero = true
		}
		if v := d.Metadata["quotaResetDelay"]; v != "" {
			if dur, ok := ParseDuration(v); ok {
				f.resetDelay = max(f.resetDelay, dur)
			}
		}
		if v := d.Metadata["quotaResetTimeStamp"]; v != "" {
			if ts, err := time.Parse(time.RFC3339, v); err == nil {
				f.resetAt = ts.UTC()
			}
		}
	case strings.HasSuffix(d.Type, "QuotaFailure"):
		for _, v := range d.Violations {
			markQuotaID(v.QuotaID, f)
			if v.QuotaValue == "0" {
				f.limitZero = true
			}
		}
	case strings.HasSuffix(d.Type, "RetryInfo"):
		if dur, ok := ParseDuration(d.RetryDelay); ok {
			f.retryDelay = max(f.retryDelay, dur)
		}
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
	f.isError = f.nids > 0 || f.message != ""
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
		if !parseJSON(d, &ef, 0) || !ef.isError {
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
	s := string(t)
	low := strings.ToLower(s)
	if i := strings.Index(low, "<title"); i >= 0 {
		if j := strings.IndexByte(low[i:], '>'); j >= 0 {
			rest := s[i+j+1:]
			if k := strings.Index(strings.ToLower(rest), "</title"); k >= 0 {
				rest = rest[:k]
			}
			return collapse(htmlUnescape(rest))
		}
	}
	for _, tag := range [...]string{"<h1", "<h2"} {
		if i := strings.Index(low, tag); i >= 0 {
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
