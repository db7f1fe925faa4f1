package llmguard_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/llmguard/llmguard"

// imports reads the import graph of the module's non-test Go files: for
// each package directory (relative, "/" separated), the module packages
// and the external import paths it imports directly.
func imports(t *testing.T) (local, external map[string][]string) {
	t.Helper()
	local, external = map[string][]string{}, map[string][]string{}
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != "." && (strings.HasPrefix(n, ".") || n == "node_modules" || n == "testdata" || n == "test") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		if _, ok := local[pkg]; !ok {
			local[pkg] = nil
		}
		for _, s := range f.Imports {
			p := strings.Trim(s.Path.Value, `"`)
			switch {
			case strings.HasPrefix(p, module+"/"):
				if q := strings.TrimPrefix(p, module+"/"); !slices.Contains(local[pkg], q) {
					local[pkg] = append(local[pkg], q)
				}
			case strings.Contains(strings.Split(p, "/")[0], "."):
				if !slices.Contains(external[pkg], p) {
					external[pkg] = append(external[pkg], p)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return local, external
}

// graphBlock renders the module imports as docs/architecture.md lists them.
func graphBlock(local map[string][]string) string {
	var pkgs []string
	for p := range local {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	var b strings.Builder
	for _, p := range pkgs {
		deps := slices.Clone(local[p])
		sort.Strings(deps)
		b.WriteString(p + " ->")
		if len(deps) == 0 {
			b.WriteString(" (nothing)")
		}
		for _, d := range deps {
			b.WriteString(" " + d)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// deps is every module package p imports, directly or not.
func deps(local map[string][]string, p string) []string {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(p string) {
		for _, d := range local[p] {
			if !seen[d] {
				seen[d] = true
				walk(d)
			}
		}
	}
	walk(p)
	var out []string
	for d := range seen {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// TestArchitecture: docs/architecture.md lists exactly the module's import
// graph, and the arrows it says never exist do not.
func TestArchitecture(t *testing.T) {
	local, external := imports(t)
	doc, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	const open, close = "<!-- imports: generated, checked by architecture_test.go -->\n```\n", "```"
	_, rest, ok := strings.Cut(string(doc), open)
	block, _, ok2 := strings.Cut(rest, close)
	if !ok || !ok2 {
		t.Fatalf("docs/architecture.md has no imports block (%q)", open)
	}
	if want := graphBlock(local); block != want {
		t.Errorf("docs/architecture.md's imports block is out of date; it should read:\n%s", want)
	}

	// Nothing imports cmd or internal/cli but the main.
	for p, ds := range local {
		for _, d := range ds {
			if strings.HasPrefix(d, "cmd/") || d == "internal/cli" && p != "cmd/llmguard" {
				t.Errorf("%s imports %s", p, d)
			}
		}
	}
	// The engine, the edges and the adapters never see YAML or config.
	for _, p := range []string{"resilience", "gateway", "mcpserver", "mcpproxy", "batch", "catalog", "classify", "state", "state/memstore",
		"provider", "provider/anthropic", "provider/openai", "provider/gemini", "provider/registry"} {
		for _, d := range append(deps(local, p), p) {
			if d == "config" {
				t.Errorf("%s depends on config", p)
			}
			for _, e := range external[d] {
				if strings.Contains(e, "yaml") {
					t.Errorf("%s depends on %s (through %s)", p, e, d)
				}
			}
		}
	}
	// Layers that never point up or sideways.
	never := map[string][]string{
		"classify":           {"provider", "resilience", "gateway", "mcpserver", "mock", "config", "catalog", "state"},
		"provider":           {"resilience", "gateway", "mcpserver", "mock", "config", "catalog"},
		"provider/anthropic": {"resilience", "gateway", "mcpserver", "mock", "config", "catalog"},
		"provider/openai":    {"resilience", "gateway", "mcpserver", "mock", "config", "catalog"},
		"provider/gemini":    {"resilience", "gateway", "mcpserver", "mock", "config", "catalog"},
		"resilience":         {"gateway", "mcpserver", "mock", "config", "provider/anthropic", "provider/openai", "provider/gemini", "provider/registry"},
		"gateway":            {"mcpserver", "mock", "config", "provider/anthropic", "provider/openai", "provider/gemini", "provider/registry"},
		"mcpserver":          {"gateway", "mock", "config", "provider/anthropic", "provider/openai", "provider/gemini", "provider/registry"},
		"batch":              {"gateway", "mcpserver", "mock", "config", "provider/anthropic", "provider/openai", "provider/gemini", "provider/registry"},
		"mock":               {"provider", "resilience", "gateway", "mcpserver", "config", "catalog"},
		"catalog":            {"provider", "resilience", "config", "classify"},
		"state":              {"resilience", "provider", "classify"},
		"telemetry":          {"gateway", "mcpserver", "mock", "config"},
		"web":                {"gateway", "mcpserver", "mock", "config"},
		"mcpproxy":           {"resilience", "provider", "gateway", "mcpserver", "mock", "config"},
	}
	for p, bad := range never {
		all := deps(local, p)
		for _, b := range bad {
			for _, d := range all {
				if d == b || strings.HasPrefix(d, b+"/") && !strings.HasPrefix(d, p+"/") {
					t.Errorf("%s depends on %s", p, d)
				}
			}
		}
	}
}
