package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoad feeds arbitrary YAML to Parse and Validate: they must never
// panic, every error must be one-line *FieldErrors, and a config that
// validates must render as YAML.
func FuzzLoad(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	env := envFunc(map[string]string{"ANTHROPIC_API_KEY": "sk-ant-fuzzkey-0000000000", "K": "v", "N": "3"})
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("fuzz.yaml", data, env)
		if err == nil {
			err = c.Validate()
			if err == nil {
				if _, merr := c.EffectiveYAML(); merr != nil {
					t.Fatalf("EffectiveYAML: %v", merr)
				}
				for _, r := range c.Routes {
					for i := range r.Targets {
						_ = r.TargetPolicy(i)
					}
				}
			}
		}
		if err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				if line == "" {
					t.Fatalf("empty error line in %q", err)
				}
			}
			if strings.Contains(err.Error(), "sk-ant-fuzzkey-0000000000") {
				t.Fatalf("error leaks a key: %v", err)
			}
			if w := goWords.FindString(err.Error()); w != "" && !strings.Contains(string(data), w) {
				t.Fatalf("error names a Go type (%q): %v", w, err)
			}
		}
	})
}
