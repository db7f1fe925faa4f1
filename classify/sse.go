package classify

import (
	"bytes"

	"github.com/llmguard/llmguard/internal/sse"
)

// isSSE reports whether t looks like a text/event-stream body.
func isSSE(t []byte) bool {
	return bytes.HasPrefix(t, []byte("event:")) || bytes.HasPrefix(t, []byte("data:")) ||
		bytes.HasPrefix(t, []byte(": ")) || bytes.HasPrefix(t, []byte("id:"))
}

// parseSSE reads an event stream with the one SSE reader (internal/sse) and
// records in rep the first event whose data is a JSON error; a stream without
// one is recorded as an event stream that carries no error.
func parseSSE(t []byte, rep *bodyReport, own envKind) {
	r := sse.NewReader(bytes.NewReader(t))
	for {
		ev, err := r.Next()
		if err != nil {
			break // the end, or a cut stream: what was read is all there is
		}
		d := bytes.TrimSpace(ev.Data)
		if len(d) == 0 || d[0] != '{' && d[0] != '[' {
			continue
		}
		var in bodyReport
		if !parseJSON(string(d), &in, 0, own) || !in.isError {
			continue
		}
		in.format, in.stream = fmtSSE, true
		*rep = in
		return
	}
	rep.format = fmtSSE
	rep.stream = true
}
