package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/llmguard/llmguard/alert"
	"github.com/llmguard/llmguard/mock"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/resilience"
)

// With alerts.webhook_url set, loadApp feeds the engine's events to the
// notifier: a rejected key alerts once, redacted, and the breaker opening
// on it alerts too.
func TestLoadAppAlerts(t *testing.T) {
	var mu sync.Mutex
	var texts []string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m alert.Message
		json.NewDecoder(r.Body).Decode(&m)
		mu.Lock()
		texts = append(texts, m.Text)
		mu.Unlock()
	}))
	defer hook.Close()
	sc, _ := mock.Builtin("bad-key")
	up := httptest.NewServer(mock.New(&mock.Config{Scenario: sc}))
	defer up.Close()

	const key = "sk-ant-api03-TOPSECRETTOPSECRETTOPSECRET"
	dir := t.TempDir()
	path := filepath.Join(dir, "llmguard.yaml")
	cfg := "providers:\n  anthropic:\n    api_key: ${ANTHROPIC_API_KEY}\n    base_url: " + up.URL +
		"\nroutes:\n  default:\n    targets: [anthropic/claude-sonnet-4-5]\nalerts:\n  webhook_url: " + hook.URL + "/services/T0/B0/X\n"
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		if k == "ANTHROPIC_API_KEY" {
			return key
		}
		return ""
	}
	env := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Getenv: getenv}
	var seen []resilience.EventKind
	app, err := loadAppWith(context.Background(), env, path, &resilience.Options{OnEvent: func(e resilience.Event) { seen = append(seen, e.Kind) }})
	if err != nil {
		t.Fatal(err)
	}
	if app.Alerts == nil {
		t.Fatal("App.Alerts is nil with alerts.webhook_url set")
	}
	req := &provider.Request{Messages: []provider.Message{{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: "hi"}}}}}
	for i := 0; i < 2; i++ {
		if _, err := app.Engine.Chat(context.Background(), &resilience.Call{Route: "default", Request: req}); err == nil {
			t.Fatal("Chat succeeded against a bad key")
		}
	}
	app.Close() // delivers what is queued
	if len(seen) == 0 {
		t.Error("the caller's OnEvent was not called next to the notifier")
	}
	mu.Lock()
	defer mu.Unlock()
	all := strings.Join(texts, "\n")
	if n := strings.Count(all, "anthropic key was refused"); n != 1 {
		t.Errorf("key alerts = %d, want 1:\n%s", n, all)
	}
	if !strings.Contains(all, "breaker opened for key anthropic") {
		t.Errorf("no breaker alert:\n%s", all)
	}
	if strings.Contains(all, "TOPSECRET") {
		t.Errorf("an alert leaks the key:\n%s", all)
	}
}
