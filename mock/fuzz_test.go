package mock

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
)

func FuzzParseStep(f *testing.F) {
	for _, s := range []string{"529", "429:2", "ok@300ms", "midstream:5", "rate-limit", "", "200@", "x:y@z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st, err := ParseStep(s)
		if err != nil {
			return
		}
		again, err := ParseStep(st.String())
		if err != nil || again != st {
			t.Fatalf("%q -> %+v -> %q -> %+v, %v", s, st, st.String(), again, err)
		}
	})
}

func FuzzParseScenario(f *testing.F) {
	for _, name := range BuiltinNames() {
		f.Add([]byte(builtinSources()[name]))
	}
	f.Add([]byte(`{"rules":[{"sequence":[529,200],"latency":{"min":"1ms","max":"2ms"}}]}`))
	f.Add([]byte("rules: !\n")) // a panic inside goccy/go-yaml (issue 11)
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := ParseScenario(data)
		if err != nil {
			if bytes.ContainsRune([]byte(err.Error()), '\n') {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		// A scenario that parses must serve without panicking.
		srv := New(&Config{Scenario: sc, Sleep: noSleep, AllowNoKey: true})
		for _, p := range []string{"/v1/messages", "/v1/chat/completions"} {
			req := httptest.NewRequest(http.MethodPost, p, bytes.NewReader([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)))
			func() {
				defer func() {
					if v := recover(); v != nil && v != http.ErrAbortHandler {
						t.Fatalf("panic: %v", v)
					}
				}()
				srv.ServeHTTP(httptest.NewRecorder(), req)
			}()
		}
	})
}

// FuzzRequestBody sends arbitrary bodies to each dialect: the mock answers
// 200 or the dialect's 400, and never panics.
func FuzzRequestBody(f *testing.F) {
	seeds := []string{
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}`,
		`{"model":"m","messages":[{"role":"user","content":[{"type":"tool_result","content":[{"type":"text","text":"x"}]}]}],"tools":[{"name":"t","input_schema":{"properties":{"a":{"type":["string","null"]}}}}],"tool_choice":{"type":"any"}}`,
		`{"model":"m","messages":[{"role":"tool","content":"r"}],"tools":[{"type":"function","function":{"name":"t","parameters":{"properties":{"e":{"enum":[3]}}}}}],"tool_choice":"required"}`,
		`{"contents":[{"parts":[{"functionResponse":{"name":"t","response":{"result":"ok"}}}]}],"tool_config":{"function_calling_config":{"mode":"any"}}}`,
		`[]`, `{`, ``, `{"model":1}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s), uint8(0))
	}
	paths := []string{"/v1/messages", "/v1/chat/completions", "/v1beta/models/g:generateContent", "/v1beta/models/g:streamGenerateContent?alt=sse", "/openai/deployments/d/chat/completions"}
	srv := New(&Config{AllowNoKey: true})
	f.Fuzz(func(t *testing.T, body []byte, which uint8) {
		p := paths[int(which)%len(paths)]
		req := httptest.NewRequest(http.MethodPost, p, bytes.NewReader(body))
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, req)
		if w.Code != 200 && w.Code != 400 {
			t.Fatalf("%s %q: status %d", p, body, w.Code)
		}
	})
}
