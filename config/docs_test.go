package config

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/llmguard/llmguard/catalog"
)

// yamlKeys lists the YAML keys of a struct type and of the structs it holds.
func yamlKeys(t reflect.Type, seen map[reflect.Type]bool, out map[string]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] || t.PkgPath() != reflect.TypeFor[Config]().PkgPath() {
		return
	}
	seen[t] = true
	for f := range t.Fields() {
		tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || tag == "-" {
			continue
		}
		if tag != "" {
			out[tag] = true
		}
		yamlKeys(f.Type, seen, out)
	}
}

// TestDocsCoverEveryKey keeps docs/config.md complete: every YAML key of the
// schema must appear in it as `key`, and every default in it must match.
func TestDocsCoverEveryKey(t *testing.T) {
	doc, err := os.ReadFile("../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	yamlKeys(reflect.TypeFor[Config](), map[reflect.Type]bool{}, keys)
	if len(keys) < 40 {
		t.Fatalf("found only %d keys", len(keys))
	}
	for k := range keys {
		if !strings.Contains(string(doc), "| `"+k+"` |") {
			t.Errorf("docs/config.md has no table row for key %q", k)
		}
	}
	for _, p := range catalog.KnownProviders() {
		if !strings.Contains(string(doc), "| `"+p.Name+"` |") {
			t.Errorf("docs/config.md does not list provider %q", p.Name)
		}
		for _, s := range append(append([]string{}, p.KeyEnv...), p.BaseURLEnv, p.ModelEnv, p.BaseURL, p.Model, p.APIVersion) {
			if s != "" && !strings.Contains(string(doc), "`"+s+"`") {
				t.Errorf("docs/config.md does not mention %q of %s", s, p.Name)
			}
		}
	}
	d := DefaultRoute()
	for _, s := range []string{
		"| `timeout` | duration | `" + fmtDur(d.Timeout), "| `max_client_wait` | duration | `" + fmtDur(*d.MaxClientWait),
		"| `repeat_hold` | duration | `" + fmtDur(*d.RepeatHold), "| `max_attempts` | int ≥ 1 | `4`", "| `max_total_attempts` | int ≥ 1 | `10`",
		"| `base_delay` | duration | `" + fmtDur(d.Retry.BaseDelay), "| `max_delay` | duration ≥ `base_delay` | `" + fmtDur(d.Retry.MaxDelay),
		"| `max_wait` | duration | `" + fmtDur(d.Retry.MaxWait), "| `budget` | number in [0,1] | `0.5`", "| `min_retry_concurrency` | int ≥ 0 | `3`",
		"| `first_token_timeout` | duration | `" + fmtDur(d.Stream.FirstTokenTimeout), "| `idle_timeout` | duration | `" + fmtDur(d.Stream.IdleTimeout),
		"| `header_timeout` | duration | `" + fmtDur(d.Stream.HeaderTimeout), "| `silent_after` | duration | `" + fmtDur(d.Stream.SilentAfter), "| `failures` | int ≥ 0 | `5`", "| `min_calls` | int ≥ 0 | `20`",
		"| `failure_ratio` | number in [0,1] | `0.5`", "| `initial_cooldown` | duration > 0 | `" + fmtDur(d.Breaker.InitialCooldown),
		"| `window` | duration | `" + fmtDur(d.Breaker.Window), "| `cooldown` | duration > 0 | `" + fmtDur(d.Breaker.Cooldown), "| `probes` | int ≥ 1 | `3`",
		"| `queue_timeout` | duration | `" + fmtDur(d.QueueTimeout), "| `max_entries` | int | `10000`", "| `max_bytes` | int | `67108864`",
	} {
		if !strings.Contains(string(doc), s) {
			t.Errorf("docs/config.md lacks %q", s)
		}
	}
}

// fmtDur formats a duration as the docs do: whole seconds as "60s", else "500ms".
func fmtDur(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return d.String()
}
