package llmguard_test

import (
	"bytes"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fzipp/gocyclo"
)

// The house limits for code (not tests): a file a reader can hold in one
// sitting, a function a reader can follow without a map.
const (
	maxFileLines  = 450
	maxComplexity = 25
)

// sources lists the module's non-test Go files, skipping what the
// architecture test skips (hidden directories, node_modules, testdata).
func sources(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != "." && (strings.HasPrefix(n, ".") || n == "node_modules" || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestLimits: no non-test file is longer than maxFileLines and no function
// in one is more complex (cyclomatic, as gocyclo counts) than maxComplexity.
func TestLimits(t *testing.T) {
	fset := token.NewFileSet()
	var stats gocyclo.Stats
	for _, path := range sources(t) {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(src, []byte("\n")); n > maxFileLines {
			t.Errorf("%s: %d lines, over the %d a file may have: split it by what its parts do", path, n, maxFileLines)
		}
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		stats = gocyclo.AnalyzeASTFile(f, fset, stats)
	}
	for _, s := range stats {
		if s.Complexity > maxComplexity {
			t.Errorf("%s: %s has cyclomatic complexity %d, over %d: give its cases functions of their own", s.Pos, s.FuncName, s.Complexity, maxComplexity)
		}
	}
}
