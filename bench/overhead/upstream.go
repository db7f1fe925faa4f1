package overhead

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/llmguard/llmguard/internal/sse"
)

// This file: what the scaling rows send and the one upstream the mock
// cannot be — a stream of N chunks (the mock answers with a few words).

// chunked answers every request with an OpenAI Chat Completions stream of
// n content chunks, each event written and flushed as it comes, as the
// mock and the providers do, at zero latency.
func chunked(n int) http.Handler {
	head := `{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1767225600,"model":"gpt-4o","service_tier":"default","system_fingerprint":"fp_bench","choices":[`
	role := []byte(head + `{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]}`)
	delta := []byte(head + `{"index":0,"delta":{"content":" word"},"logprobs":null,"finish_reason":null}]}`)
	finish := []byte(head + `{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}`)
	usage := []byte(head + fmt.Sprintf(`],"usage":{"prompt_tokens":20,"completion_tokens":%d,"total_tokens":%d}}`, n, n+20))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			return
		}
		w.Header().Set("X-Request-Id", "req_bench")
		sw := sse.NewWriter(w)
		if sw.Data(role) != nil {
			return
		}
		for range n {
			if sw.Data(delta) != nil {
				return
			}
		}
		for _, ev := range [][]byte{finish, usage, []byte("[DONE]")} {
			if sw.Data(ev) != nil {
				return
			}
		}
	})
}

// conversation is a chat request of about size bytes in dialect
// ("openai" or "anthropic") for model: a system prompt and turns of an
// agent's session whose text has what real ones have — newlines, quotes,
// tabs, non-ASCII — then a last short question.
func conversation(dialect, model string, size int) []byte {
	line := "step %d: ran `go test ./...` and the tool said \"ok\"\n\tcafé — 3 files changed, see <diff> & logs\n"
	var msgs []map[string]string
	total := 0
	for i := 0; total < size-400; i++ {
		var b strings.Builder
		for b.Len() < min(1024, size-400-total) {
			fmt.Fprintf(&b, line, i)
		}
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs = append(msgs, map[string]string{"role": role, "content": b.String()})
		total += b.Len() + 40
	}
	if len(msgs)%2 == 1 { // turns alternate, the last question is the user's
		msgs = append(msgs, map[string]string{"role": "assistant", "content": "Noted."})
	}
	msgs = append(msgs, map[string]string{"role": "user", "content": "Summarise: what changed, in one sentence"})
	req := map[string]any{"model": model, "max_tokens": 256}
	const system = "You are a careful coding agent.\nAnswer in plain text."
	if dialect == "anthropic" {
		req["system"] = system
	} else {
		msgs = append([]map[string]string{{"role": "system", "content": system}}, msgs...)
	}
	req["messages"] = msgs
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // as clients send it: "<" stays "<"
	if err := enc.Encode(req); err != nil {
		panic(err) // maps of strings always encode
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
