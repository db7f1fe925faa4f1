package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBenchChaosFlags(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"bench"}, 2, "Usage: llmguard bench <scorecard>"},
		{[]string{"bench", "nope"}, 2, `unknown scorecard "nope"`},
		{[]string{"bench", "chaos", "--requests", "0"}, 2, "--requests must be"},
		{[]string{"bench", "chaos", "extra"}, 2, "unexpected argument"},
		{[]string{"bench", "chaos", "--scenarios", "bad-kee"}, 1, `unknown scenario "bad-kee"`},
		{[]string{"bench", "chaos", "-h"}, 0, "Scenarios: overload-burst, rate-limit-storm"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: noEnv}
			if code := MainEnv(context.Background(), tt.args, env); code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.code, errb.String())
			}
			if !strings.Contains(errb.String(), tt.want) {
				t.Errorf("stderr %q, want %q", errb.String(), tt.want)
			}
		})
	}
}

// TestBenchChaosOut: a short scorecard prints its table and writes it and
// its chart to --out.
func TestBenchChaosOut(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: noEnv}
	args := []string{"bench", "chaos", "--requests", "20", "--scenarios", "bad-key", "--out", dir}
	if code := MainEnv(context.Background(), args, env); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "| bad-key | **llmguard** |") {
		t.Errorf("stdout has no llmguard row for bad-key:\n%s", out.String())
	}
	if !strings.Contains(errb.String(), "bench chaos: bad-key") {
		t.Errorf("stderr has no progress line: %q", errb.String())
	}
	md, err := os.ReadFile(filepath.Join(dir, "chaos.md"))
	if err != nil || !bytes.Equal(md, out.Bytes()) {
		t.Errorf("chaos.md (%v) differs from the table printed", err)
	}
	if svg, err := os.ReadFile(filepath.Join(dir, "chaos.svg")); err != nil || !bytes.HasPrefix(svg, []byte("<svg ")) {
		t.Errorf("chaos.svg: %v, starts %q", err, svg[:min(len(svg), 20)])
	}
}
