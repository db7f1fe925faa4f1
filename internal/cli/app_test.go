package cli

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/llmguard/llmguard/mock"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/resilience"
)

func noEnv(string) string { return "" }

// With no key at all, the default route is served by the simulated
// provider, over real loopback HTTP, and every answer says so.
func TestLoadAppZeroConfigSim(t *testing.T) {
	t.Chdir(t.TempDir()) // no llmguard.yaml here
	env := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Getenv: noEnv}
	app, err := loadApp(context.Background(), env, "")
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	if _, ok := app.Adapters["sim"]; !ok {
		t.Fatalf("adapters = %v, want sim", app.Adapters)
	}
	req := &provider.Request{Messages: []provider.Message{{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: "hello there"}}}}}
	res, err := app.Engine.Chat(context.Background(), &resilience.Call{Route: "default", Request: req})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Response.Text, SimLabel) || !strings.Contains(res.Response.Text, "hello there") {
		t.Errorf("answer %q: want the sim label and the prompt echoed", res.Response.Text)
	}
	if !strings.HasPrefix(res.Target, "sim/") {
		t.Errorf("target %q, want sim/...", res.Target)
	}

	req2 := *req
	req2.Stream = true
	sr, err := app.Engine.Stream(context.Background(), &resilience.Call{Route: "default", Request: &req2})
	if err != nil {
		t.Fatal(err)
	}
	defer sr.Stream.Close()
	var text strings.Builder
	for {
		c, err := sr.Stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		text.WriteString(c.Text)
	}
	if !strings.HasPrefix(text.String(), SimLabel) {
		t.Errorf("streamed %q: want the sim label first", text.String())
	}
}

func TestLoadAppBadConfigNamesField(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/llmguard.yaml"
	if err := writeFile(path, "routes:\n  default:\n    targets: [nosuch/model]\n"); err != nil {
		t.Fatal(err)
	}
	env := &Env{Getenv: noEnv, Stdout: io.Discard, Stderr: io.Discard}
	_, err := loadApp(context.Background(), env, path)
	if err == nil || !strings.Contains(err.Error(), "routes.default.targets") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %v, want one line naming routes.default.targets", err)
	}
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o644) }

// Outside llmguard mcp the mcp/sampling target has no client to ask: it is
// skipped, and the caller sees the real provider's failure.
func TestLoadAppSamplingTargetOutsideMCP(t *testing.T) {
	up := httptest.NewServer(mock.New(nil))
	defer up.Close()
	path := t.TempDir() + "/llmguard.yaml"
	cfg := "providers:\n  anthropic: {api_key: sk-ant-test-0000, base_url: " + up.URL + "}\n" +
		"routes:\n  default:\n    targets: [\"anthropic/claude-haiku-4-5+fault=401\", mcp/sampling]\n"
	if err := writeFile(path, cfg); err != nil {
		t.Fatal(err)
	}
	env := &Env{Getenv: noEnv, Stdout: io.Discard, Stderr: io.Discard}
	app, err := loadApp(context.Background(), env, path)
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	req := &provider.Request{Messages: []provider.Message{{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: "hi"}}}}}
	_, err = app.Engine.Chat(context.Background(), &resilience.Call{Route: "default", Request: req})
	var re *resilience.RouteError
	if !errors.As(err, &re) || re.Last() == nil || re.Last().Verdict.Status != 401 {
		t.Fatalf("err = %v, want a route error whose last attempt is the upstream 401", err)
	}
	if got := app.Engine.Routes()["default"]; len(got) != 1 {
		t.Errorf("route default = %v, want mcp/sampling dropped", got)
	}
}
