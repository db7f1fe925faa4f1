package classify

import (
	"net/http"
	"time"
)

// Classify decides what a provider failure means. It looks at the body's
// code/type/reason fields first, then the status, then the message text,
// and reads every wait hint in the headers and body. It parses at most the
// first 64 KiB of in.Body and never panics. It is safe for concurrent use.
func Classify(in Input) Verdict {
	now := in.Now
	if now.IsZero() {
		now = time.Now()
	}
	if in.Status == 0 && in.Err != nil {
		return classifyTransport(in.Err, in.Header)
	}
	rep := parseBody(in.Body, ownEnvelope(in.Provider))
	status := in.Status
	if status >= 200 && status < 300 {
		if !rep.isError {
			if in.Err != nil {
				return classifyTransport(in.Err, in.Header)
			}
			v := Verdict{Status: status, Class: Unknown, Scope: ScopeRequest,
				ProviderType: rep.ptype}
			x := readHdr(in.Header)
			v.RequestID = requestID(&x, &rep)
			v.Message = formatMessage(status, "", "no error found in the response body", v.RequestID)
			return v
		}
		rep.stream = true
	}
	return decide(&rep, status, in.Header, now)
}

// ClassifyStreamError classifies one event-stream event's JSON data (an
// Anthropic "error" event, an OpenAI Responses "error" or "response.failed"
// event, an OpenRouter chunk with finish_reason "error", a Gemini chunk
// with promptFeedback.blockReason). It reports false when the event is not
// an error. provider is read as Input.Provider is. It is safe for
// concurrent use.
func ClassifyStreamError(provider string, data []byte, h http.Header) (Verdict, bool) {
	t := trimSpace(data)
	if len(t) > maxBody {
		t = t[:maxBody]
	}
	if len(t) == 0 || (t[0] != '{' && t[0] != '[') {
		return Verdict{}, false
	}
	var rep bodyReport
	if !parseJSON(string(t), &rep, 0, ownEnvelope(provider)) || !rep.isError {
		return Verdict{}, false
	}
	rep.format, rep.stream = fmtSSE, true
	return decide(&rep, http.StatusOK, h, time.Now()), true
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\n' || b[0] == '\r' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}
