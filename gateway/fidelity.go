package gateway

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/llmguard/llmguard/provider"
)

// maxDroppedHeader bounds the x-llmguard-dropped header: the names come from
// the client's keys.
const maxDroppedHeader = 2 << 10

// setDropped names in the X-Llmguard-Dropped header the request fields the
// target's adapter could not send (provider.Response.Dropped), so that no
// field is lost silently. Names are comma-separated, printable ASCII, and
// the list is cut at 2 KiB with a count of the rest.
func setDropped(h http.Header, dropped []string) {
	if len(dropped) == 0 {
		return
	}
	var b strings.Builder
	for i, d := range dropped {
		if b.Len()+len(d) > maxDroppedHeader {
			b.WriteString("... (" + strconv.Itoa(len(dropped)-i) + " more)")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		for j := 0; j < len(d); j++ {
			if c := d[j]; c < 0x20 || c > 0x7e || c == ',' {
				b.WriteByte('?')
			} else {
				b.WriteByte(c)
			}
		}
	}
	h["X-Llmguard-Dropped"] = []string{b.String()}
}

// answerDropped is what a non-streaming answer loses on its way to a
// client of dialect: the request fields its adapter dropped, and the
// answer's thinking blocks, which only Anthropic clients receive.
func answerDropped(dialect string, res *provider.Response) []string {
	if dialect == DialectAnthropic || len(res.Thinking) == 0 {
		return res.Dropped
	}
	return append(slices.Clip(res.Dropped), "answer.content[type="+res.Thinking[0].Type+"]")
}
