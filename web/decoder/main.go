//go:build js && wasm

// Command decoder is the classifier compiled to WebAssembly for the error
// decoder page (web/ui): it defines llmguardDecode(status, headers, body,
// provider) in the page, which returns the verdict and the advice as JSON.
// Nothing leaves the browser. Build it with go generate ./web.
package main

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"syscall/js"

	"github.com/llmguard/llmguard/classify"
)

func main() {
	js.Global().Set("llmguardDecode", js.FuncOf(func(this js.Value, args []js.Value) any {
		arg := func(i int) string {
			if i < len(args) && args[i].Type() == js.TypeString {
				return args[i].String()
			}
			return ""
		}
		return decode(arg(0), arg(1), arg(2), arg(3))
	}))
	select {} // keep the function alive
}

// decode classifies a pasted failure: status as text, headers as
// "Name: value" lines, the body as is.
func decode(status, headers, body, provider string) string {
	in := classify.Input{Provider: provider, Header: http.Header{}, Body: []byte(body)}
	in.Status, _ = strconv.Atoi(strings.TrimSpace(status))
	for line := range strings.Lines(headers) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) != "" {
			in.Header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	v := classify.Classify(in)
	b, err := json.Marshal(struct {
		Verdict classify.Verdict `json:"verdict"`
		Advice  string           `json:"advice"`
	}{v, v.Advice()})
	if err != nil {
		return `{"error":` + strconv.Quote(err.Error()) + `}`
	}
	return string(b)
}
