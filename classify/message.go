package classify

import (
	"net/http"
	"strconv"
	"strings"
)

// requestID picks the provider's request id: headers first, then the body,
// then an id quoted inside the message.
func requestID(x *hdr, rep *bodyReport) string {
	for _, v := range x.v[hRequestID:] {
		if v != "" {
			return truncate(clean(v), 80)
		}
	}
	if rep.reqID != "" {
		return truncate(clean(rep.reqID), 80)
	}
	if i := indexFold(rep.message, "request id "); i >= 0 {
		s := rep.message[i+len("request id "):]
		j := 0
		for j < len(s) && isKeyChar(s[j]) {
			j++
		}
		if j >= 8 {
			return truncate(s[:j], 80)
		}
	}
	return ""
}

// buildMessage renders the one-line message:
// "<status> <provider_type>: <message> (request-id <id>)".
// ptype is the already cleaned provider type.
func buildMessage(status int, rep *bodyReport, ptype, reqID string) string {
	switch rep.format {
	case fmtHTML:
		return formatMessage(status, "html error page from proxy", strconv.Quote(truncate(clean(rep.message), 120)), reqID)
	case fmtEmpty:
		return formatMessage(status, "", "empty body", reqID)
	}
	label := ptype
	if rep.stream && status >= 200 && status < 300 {
		where := " (in stream)"
		if rep.format != fmtSSE {
			where = " (in a 200 response)"
		}
		if label == "" {
			label = "error"
		}
		label += where
	}
	msg := rep.message
	if msg == "" && rep.format == fmtSSE && !rep.isError {
		msg = "event stream without an error event"
	}
	return formatMessage(status, label, msg, reqID)
}

func formatMessage(status int, label, msg, reqID string) string {
	var num [8]byte
	head := strconv.AppendInt(num[:0], int64(status), 10)
	if label == "" {
		label = strings.ToLower(http.StatusText(status))
	}
	label = truncate(clean(label), 60)
	msg = clean(msg) // cheap when the caller already collapsed it
	const tailOpen, tailClose = " (request-id ", ")"
	tailLen := 0
	if reqID != "" {
		tailLen = len(tailOpen) + len(reqID) + len(tailClose)
	}
	headLen := len(head)
	if label != "" {
		headLen += 1 + len(label)
	}
	budget := maxMessage - headLen - tailLen - 2
	if tailLen > 0 && msg != "" && len(msg) <= maxMessage-headLen-2 && strings.Contains(msg, reqID) {
		tailLen, budget = 0, len(msg) // the id is already in a message that fits
	}
	budget = max(budget, 20)
	var b strings.Builder
	b.Grow(headLen + 2 + min(len(msg), budget+3) + tailLen)
	b.Write(head)
	if label != "" {
		b.WriteByte(' ')
		b.WriteString(label)
	}
	if msg != "" {
		b.WriteString(": ")
		writeTruncated(&b, msg, budget)
	}
	if tailLen > 0 {
		b.WriteString(tailOpen)
		b.WriteString(reqID)
		b.WriteString(tailClose)
	}
	return b.String()
}
