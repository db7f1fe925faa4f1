package config_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/llmguard/llmguard/config"
)

func ExampleLoad() {
	dir, _ := os.MkdirTemp("", "llmguard")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "llmguard.yaml")
	os.WriteFile(path, []byte(`
providers:
  anthropic: {api_key: ${ANTHROPIC_API_KEY}}
routes:
  default:
    targets:
      - anthropic/claude-sonnet-4-5
      - {target: deepseek, breaker: {failures: 8}}
    retry: {max_attempts: 3}
`), 0o600)
	env := map[string]string{"ANTHROPIC_API_KEY": "sk-ant-api03-0123456789abcdef", "DEEPSEEK_API_KEY": "sk-0123456789abcdef"}
	cfg, err := config.Load(path, func(k string) string { return env[k] })
	if err != nil {
		fmt.Println(err)
		return
	}
	r, cat := cfg.Routes["default"], cfg.Catalog()
	for i := range r.Targets {
		p := r.TargetPolicy(i)
		price, _ := cat.Price(p.Provider, p.Model)
		fmt.Printf("%s attempts=%d breaker.failures=%d $%.2f/MTok in\n", p.Target, p.Retry.MaxAttempts, *p.Breaker.Failures, price.In)
	}
	fmt.Println(cfg.Providers["deepseek"].BaseURL, config.MaskKey(cfg.Providers["anthropic"].APIKey))
	// Output:
	// anthropic/claude-sonnet-4-5 attempts=3 breaker.failures=5 $3.00/MTok in
	// deepseek/deepseek-chat attempts=3 breaker.failures=8 $0.28/MTok in
	// https://api.deepseek.com/v1 sk-ant-…cdef
}

func ExampleFromEnv() {
	env := map[string]string{"ANTHROPIC_API_KEY": "sk-ant-api03-0123456789abcdef", "GEMINI_API_KEY": "AIza0123456789abcdef"}
	cfg, _ := config.FromEnv(func(k string) string { return env[k] })
	fmt.Println(cfg.Source, cfg.Routes["default"].Order)
	for _, t := range cfg.Routes["default"].Targets {
		fmt.Println(t.Target)
	}

	none, _ := config.FromEnv(func(string) string { return "" })
	fmt.Println(none.Routes["default"].Targets[0].Target)
	// Output:
	// environment cost
	// gemini/gemini-2.5-flash
	// anthropic/claude-sonnet-4-5
	// sim/sim-1
}

func ExampleConfig_Validate() {
	cfg, err := config.Parse("llmguard.yaml", []byte(`
routes:
  default:
    targets: [sim/sim-1, foo/bar]
    retry: {budget: 1.5}
`), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	err = cfg.Validate()
	fmt.Println(err)
	var fe *config.FieldError
	if errors.As(err, &fe) {
		fmt.Println(fe.Path, fe.Line)
	}
	// Output:
	// llmguard.yaml:4:26: routes.default.targets[1]: unknown provider "foo" (known: anthropic, openai, azure, gemini, deepseek, mistral, groq, openrouter, xai, together, fireworks, sim)
	// llmguard.yaml:5:13: routes.default.retry.budget: must be in [0,1]
	// routes.default.targets[1] 4
}
