package gateway

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"
)

// TestClaudeCodeRequests replays every request Claude Code 2.1 sent
// (testdata/claude-code, recorded by test/claude-code) through the gateway:
// to an Anthropic target it goes exactly as sent, anthropic-beta included;
// to an OpenAI or Gemini target it is answered, and what those cannot
// carry is named in x-llmguard-dropped.
func TestClaudeCodeRequests(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "claude-code", "*.txtar"))
	if len(files) == 0 {
		t.Fatal("no recorded Claude Code requests in testdata/claude-code")
	}
	s := newRecStack(t, nil)
	for _, f := range files {
		ar, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		headers := map[string]string{}
		for _, af := range ar.Files {
			name := filepath.Base(f) + "/" + af.Name
			if strings.HasSuffix(af.Name, ".http") {
				for _, line := range strings.Split(string(af.Data), "\n") {
					if k, v, ok := strings.Cut(line, ": "); ok && k == "anthropic-beta" {
						headers[strings.TrimSuffix(af.Name, ".http")] = v
					}
				}
				continue
			}
			if !strings.HasSuffix(af.Name, ".json") {
				continue
			}
			var body map[string]any
			if err := json.Unmarshal(af.Data, &body); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			beta := headers[strings.TrimSuffix(af.Name, ".json")]
			t.Run(name+"/anthropic", func(t *testing.T) {
				r := s.post(t, "/v1/messages", string(af.Data), "Anthropic-Beta", beta, "anthropic-version", "2023-06-01")
				if r.status != 200 {
					t.Fatalf("status %d: %s", r.status, r.body)
				}
				if d := cmp.Diff(any(body), any(s.upstream(t))); d != "" {
					t.Errorf("upstream body differs from Claude Code's (-sent +upstream):\n%s", d)
				}
				if got := s.rec.last(t).header.Get("Anthropic-Beta"); got != beta {
					t.Errorf("anthropic-beta upstream = %q, want %q", got, beta)
				}
				if d := r.header.Get("X-Llmguard-Dropped"); d != "" {
					t.Errorf("x-llmguard-dropped = %q, want nothing dropped", d)
				}
			})
			for _, route := range []string{"oai", "gem"} {
				t.Run(name+"/"+route, func(t *testing.T) {
					body["model"] = route
					b, _ := json.Marshal(body)
					r := s.post(t, "/v1/messages", string(b), "Anthropic-Beta", beta)
					if r.status != 200 {
						t.Fatalf("status %d: %s", r.status, r.body)
					}
					if _, ok := body["thinking"]; ok && !strings.Contains(r.header.Get("X-Llmguard-Dropped"), "thinking") {
						t.Errorf("x-llmguard-dropped = %q, want thinking named", r.header.Get("X-Llmguard-Dropped"))
					}
					t.Logf("dropped: %s", r.header.Get("X-Llmguard-Dropped"))
					up := s.upstream(t)
					if strings.Contains(string(af.Data), `"role": "system"`) && route == "oai" {
						n := 0
						for _, m := range up["messages"].([]any) {
							if dig(m, "role") == "system" {
								n++
							}
						}
						if n < 2 { // the top-level system, then the messages' own
							t.Errorf("upstream has %d system messages, want the system prompt and the in-place ones", n)
						}
					}
				})
			}
		}
	}
}
