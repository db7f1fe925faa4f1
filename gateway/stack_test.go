package gateway

import (
	"log/slog"
	"net/http"
	"testing"

	"github.com/llmguard/llmguard/config"
	"github.com/llmguard/llmguard/provider/registry"
	"github.com/llmguard/llmguard/resilience"
)

// newGateway builds the stack every gateway test runs from a config file's
// text: the adapters (on client; nil is the shared transport), a quiet
// engine whose events go to onEvent (may be nil), and the gateway on them
// with o's other options (nil: defaults; Engine, Catalog and Logger are
// set here). It returns the engine too.
func newGateway(tb testing.TB, yaml string, client *http.Client, onEvent func(resilience.Event), o *Options) (*Server, *resilience.Engine) {
	tb.Helper()
	cfg, err := config.Parse("test.yaml", []byte(yaml), nil)
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		tb.Fatal(err)
	}
	adapters, err := registry.Build(cfg.ProviderSettings(), client)
	if err != nil {
		tb.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	eo := cfg.EngineOptions()
	eo.Adapters, eo.Logger, eo.OnEvent = adapters, quiet, onEvent
	eng, err := resilience.New(eo)
	if err != nil {
		tb.Fatal(err)
	}
	var opts Options
	if o != nil {
		opts = *o
	}
	opts.Engine, opts.Catalog, opts.Logger = eng, cfg.Catalog(), quiet
	srv, err := New(&opts)
	if err != nil {
		tb.Fatal(err)
	}
	return srv, eng
}
