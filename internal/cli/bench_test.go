package cli

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/llmguard/llmguard/bench/overhead"
)

// TestMain runs this test binary as a bench's child when a bench started
// it (overhead.SpawnSelf: "cli.test bench child ARGS").
func TestMain(m *testing.M) {
	if os.Getenv(overhead.ChildEnv) != "" {
		os.Exit(Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func runBenchArgs(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = MainEnv(context.Background(), append([]string{"bench"}, args...),
		&Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
	return code, out.String(), errb.String()
}

// Bad usage of llmguard bench is exit 2 with a one-line reason, before
// anything is measured.
func TestBenchFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "Usage: llmguard bench <scorecard>"},
		{[]string{"speed"}, `unknown scorecard "speed"`},
		{[]string{"overhead", "--rate", "100", "--concurrency", "4"}, "give --rate or --concurrency, not both"},
		{[]string{"overhead", "--rate", "0"}, "--rate must be above 0"},
		{[]string{"overhead", "--rate", "60000"}, "at most 50000"},
		{[]string{"overhead", "--concurrency", "2000"}, "--concurrency must be between 1 and 1024"},
		{[]string{"overhead", "--duration", "0s"}, "--duration must be above 0"},
		{[]string{"overhead", "--duration", "1h"}, "at most 10m"},
		{[]string{"overhead", "--rate", "fast"}, `invalid value "fast"`},
		{[]string{"overhead", "extra"}, `unexpected argument "extra"`},
		{[]string{"scaling", "--group", "disks"}, `--group "disks": want body, stream or conns`},
		{[]string{"scaling", "--duration", "2m"}, "at most 1m"},
	} {
		code, stdout, stderr := runBenchArgs(tt.args...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, tt.want) {
			t.Errorf("bench %v: exit %d, stdout %q, stderr %q; want exit 2 and %q", tt.args, code, stdout, stderr, tt.want)
		}
	}
	if code, _, stderr := runBenchArgs("overhead", "-h"); code != 0 || !strings.Contains(stderr, "[--rate QPS | --concurrency N] [--duration 20s] [--stream]") {
		t.Errorf("bench overhead -h: exit %d: %s", code, stderr)
	}
}

// A short run of each scorecard prints its Markdown report on stdout and
// its progress on stderr.
func TestBenchShort(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"overhead", "--rate", "200", "--duration", "500ms", "--search=false", "--stream"},
			[]string{"**Latency at 200 QPS**", "added first byte p50", "| llmguard | 33 | 0 |", "**Targets**"}},
		{[]string{"overhead", "--concurrency", "2", "--duration", "300ms"}, []string{"**Throughput at 2 connections**", "× proxy"}},
		{[]string{"scaling", "--group", "conns", "--duration", "150ms"}, []string{"**Connections**", "| 256 connections |"}},
	} {
		code, stdout, stderr := runBenchArgs(tt.args...)
		if code != 0 {
			t.Errorf("bench %v: exit %d\n%s", tt.args, code, stderr)
		}
		for _, w := range tt.want {
			if !strings.Contains(stdout, w) {
				t.Errorf("bench %v: no %q in\n%s", tt.args, w, stdout)
			}
		}
		if !strings.Contains(stderr, tt.args[0]+": ") {
			t.Errorf("bench %v: no progress on stderr: %q", tt.args, stderr)
		}
	}
}
