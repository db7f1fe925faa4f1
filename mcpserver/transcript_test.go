package mcpserver

import (
	"context"
	"flag"
	"log/slog"
	"os"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
	"github.com/llmguard/llmguard/internal/syncbuf"
	"github.com/llmguard/llmguard/mock"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite testdata/*.txtar golden transcripts")

// TestTranscript records what an agent's MCP client sends and receives for
// failing calls (JSON-RPC over the wire, deterministic: seeded jitter, mock
// request ids) and compares it with testdata/transcript.txtar. The README's
// transcript is taken from this file. Run with -update to rewrite it.
func TestTranscript(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cases := []struct {
			name, target, tool string
			args               map[string]any
		}{
			{"overloaded.jsonl", "anthropic/claude-sonnet-4-5", "summarize",
				map[string]any{"text": "Release notes: the deploy failed twice, then passed.", "bullets": 3}},
			{"bad_key.jsonl", "anthropic/claude-sonnet-4-5", "ask", map[string]any{"prompt": "Is the build green?"}},
		}
		got := &txtar.Archive{Comment: []byte("JSON-RPC as the agent's MCP client sees it (-> sent, <- received), initialize omitted.\nRegenerate: go test ./mcpserver -run TestTranscript -update\n")}
		for _, tc := range cases {
			sc, err := mock.ParseScenario([]byte("rules:\n  - sequence: [" + map[string]string{
				"overloaded.jsonl": "overloaded", "bad_key.jsonl": "bad_key"}[tc.name] + "]\n" +
				// A millisecond of (virtual) latency: the client's log of
				// its request is written before the first progress comes.
				"    latency: {fixed: 1ms}\n"))
			if err != nil {
				t.Fatal(err)
			}
			r := newRigScenario(t, sc, []string{tc.target}, nil, nil)
			var wire syncbuf.Buffer
			ct, st := mcp.NewInMemoryTransports()
			cfg := *r.cfg
			cfg.Logger = slog.New(slog.DiscardHandler)
			ss, err := New(&cfg).Connect(context.Background(), st, nil)
			if err != nil {
				t.Fatal(err)
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(context.Background(),
				&mcp.LoggingTransport{Transport: ct, Writer: &wire}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatal(err)
			}
			p := &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args}
			p.SetProgressToken("progress-1")
			res, err := cs.CallTool(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			errorLine(t, res)
			cs.Close()
			ss.Wait()
			var lines []string
			for _, l := range strings.Split(wire.String(), "\n") {
				dir, msg, ok := strings.Cut(l, ": ")
				if !ok || (dir != "read" && dir != "write") || strings.Contains(msg, `"initialize"`) || strings.Contains(msg, `"notifications/initialized"`) ||
					strings.Contains(msg, `"protocolVersion"`) {
					continue
				}
				arrow := "-> "
				if dir == "read" {
					arrow = "<- "
				}
				lines = append(lines, arrow+msg)
			}
			got.Files = append(got.Files, txtar.File{Name: tc.name, Data: []byte(strings.Join(lines, "\n") + "\n")})
		}
		const path = "testdata/transcript.txtar"
		if *update {
			if err := os.MkdirAll("testdata", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, txtar.Format(got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -update to create it)", err)
		}
		if diff := cmp.Diff(string(want), string(txtar.Format(got))); diff != "" {
			t.Errorf("transcript changed (-want +got); run with -update if intended:\n%s", diff)
		}
	})
}
