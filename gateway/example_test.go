package gateway_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/llmguard/llmguard/config"
	"github.com/llmguard/llmguard/gateway"
	"github.com/llmguard/llmguard/mock"
	"github.com/llmguard/llmguard/provider/registry"
	"github.com/llmguard/llmguard/resilience"
)

// A gateway in front of an (here: mock) Anthropic upstream. The OpenAI
// client's request is translated, and the Anthropic answer comes back as a
// chat.completion, with headers naming the target that answered.
func Example() {
	upstream := httptest.NewServer(mock.New(nil))
	defer upstream.Close()

	cfg, err := config.Parse("llmguard.yaml", []byte(`
providers:
  anthropic: {base_url: `+upstream.URL+`, api_key: sk-ant-example}
routes:
  default:
    targets: [anthropic/claude-sonnet-4-5]
`), nil)
	if err != nil {
		panic(err)
	}
	adapters, err := registry.Build(cfg.ProviderSettings(), nil)
	if err != nil {
		panic(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	eo := cfg.EngineOptions()
	eo.Adapters, eo.Logger = adapters, quiet
	eng, err := resilience.New(eo)
	if err != nil {
		panic(err)
	}
	srv, err := gateway.New(&gateway.Options{Engine: eng, Catalog: cfg.Catalog(), Logger: quiet})
	if err != nil {
		panic(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, ln, nil) }()

	res, err := http.Post("http://"+ln.Addr().String()+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"default","messages":[{"role":"user","content":"Hello there"}]}`))
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	fmt.Println(res.StatusCode, res.Header.Get("X-Llmguard-Target"))
	fmt.Println(strings.Contains(string(body), `"content":"Mock answer from claude-sonnet-4-5: Hello there"`))

	stop() // graceful shutdown
	fmt.Println(<-done)
	// Output:
	// 200 anthropic/claude-sonnet-4-5
	// true
	// <nil>
}
