package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmguard/llmguard/batch"
	"github.com/llmguard/llmguard/mock"
	"github.com/llmguard/llmguard/test/harness"
)

// The batch command through the built binary, as a user runs it, against
// the mock on loopback: killed with SIGKILL mid-run and run again, every
// id has exactly one record; Ctrl-C stops taking items and waits for those
// in flight; a second Ctrl-C aborts them, recorded as canceled, and the
// next run does them.

// llmguardBin is the llmguard binary the test packages share (built once
// per source tree, see harness.Binary).
func llmguardBin(t *testing.T) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("signals and SIGKILL are unix")
	}
	return harness.Binary(t)
}

// batchFixture is a mock on loopback answering every request after
// latency, a config routing to it, and n items.
type batchFixture struct {
	mock       *mock.Server
	dir        string
	config, in string
	out        string
	n          int
	bin        string
}

func newBatchFixture(t *testing.T, n int, latency time.Duration) *batchFixture {
	t.Helper()
	m := mock.New(&mock.Config{Scenario: &mock.Scenario{Name: "slow", Rules: []mock.Rule{
		{Latency: mock.Latency{Fixed: latency}},
	}}, MaxRequests: 100000})
	ts := httptest.NewServer(m)
	t.Cleanup(ts.Close)
	f := &batchFixture{mock: m, dir: t.TempDir(), n: n, bin: llmguardBin(t)}
	f.config = filepath.Join(f.dir, "llmguard.yaml")
	cfg := fmt.Sprintf("providers:\n  anthropic: {base_url: %q, api_key: k}\n  openai: {base_url: %q, api_key: k}\n"+
		"routes:\n  default:\n    targets: [anthropic/claude-sonnet-4-5, openai/gpt-4.1]\n", ts.URL, ts.URL+"/v1")
	f.in, f.out = filepath.Join(f.dir, "items.jsonl"), filepath.Join(f.dir, "results.jsonl")
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "{\"id\":\"doc-%d\",\"text\":\"document %d\"}\n", i, i)
	}
	for p, s := range map[string]string{f.config: cfg, f.in: b.String()} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// start runs llmguard batch in the background.
func (f *batchFixture) start(t *testing.T, extra ...string) (*exec.Cmd, *lockedBuffer) {
	t.Helper()
	args := append([]string{"batch", "--config", f.config, "--in", f.in, "--out", f.out, "--concurrency", "8"}, extra...)
	cmd := exec.Command(f.bin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + f.dir}
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, out
}

// waitLines waits until the results file has at least n complete lines.
func (f *batchFixture) waitLines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for f.lines(t) < n {
		if time.Now().After(deadline) {
			t.Fatalf("results have %d lines after 60s, want %d", f.lines(t), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (f *batchFixture) lines(t *testing.T) int {
	b, err := os.ReadFile(f.out)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return bytes.Count(b, []byte("\n"))
}

// records maps each id to its records' statuses.
func (f *batchFixture) records(t *testing.T) map[string][]string {
	t.Helper()
	file, err := os.Open(f.out)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	m := map[string][]string{}
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		var r struct{ ID, Status string }
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%q: %v", sc.Text(), err)
		}
		m[r.ID] = append(m[r.ID], r.Status)
	}
	return m
}

// exactlyOnce checks every id has one record, and that it is an answer.
func (f *batchFixture) exactlyOnce(t *testing.T) {
	t.Helper()
	recs := f.records(t)
	if len(recs) != f.n {
		t.Errorf("%d ids in the results, want %d", len(recs), f.n)
	}
	for id, st := range recs {
		if len(st) != 1 || st[0] != "ok" {
			t.Errorf("id %s: records %v, want one ok", id, st)
		}
	}
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

func TestBatchSIGKILLResume(t *testing.T) {
	f := newBatchFixture(t, 300, 20*time.Millisecond)
	// Killed three times at different points, then run to the end.
	for _, at := range []int{30, 120, 200} {
		cmd, _ := f.start(t)
		f.waitLines(t, at)
		if err := cmd.Process.Kill(); err != nil { // SIGKILL, by PID
			t.Fatal(err)
		}
		_ = cmd.Wait()
		t.Logf("killed with %d records on disk, %d requests served so far", f.lines(t), len(f.mock.Requests()))
	}
	cmd, out := f.start(t)
	if err := cmd.Wait(); exitCode(err) != 0 {
		t.Fatalf("last run: %v\n%s", err, out)
	}
	f.exactlyOnce(t)
	if got := len(f.mock.Requests()); got < f.n {
		t.Errorf("mock served %d requests for %d items", got, f.n)
	}
	t.Logf("%d ids, each once; the mock served %d requests (%d redone after the kills)", f.n, len(f.mock.Requests()), len(f.mock.Requests())-f.n)
	if !strings.Contains(out.String(), "done by an earlier run") {
		t.Errorf("summary does not say it resumed:\n%s", out)
	}
}

func TestBatchInterrupt(t *testing.T) {
	t.Run("once waits for the items in flight", func(t *testing.T) {
		f := newBatchFixture(t, 300, 20*time.Millisecond)
		cmd, out := f.start(t)
		f.waitLines(t, 20)
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		if exitCode(err) != batchStopped || !strings.Contains(out.String(), "stopping") || !strings.Contains(out.String(), "run the same command again") {
			t.Fatalf("exit %d:\n%s", exitCode(err), out)
		}
		for id, st := range f.records(t) {
			if len(st) != 1 || st[0] != "ok" {
				t.Errorf("%s: %v", id, st)
			}
		}
		cmd, out = f.start(t)
		if err := cmd.Wait(); exitCode(err) != 0 {
			t.Fatalf("resume: %v\n%s", err, out)
		}
		f.exactlyOnce(t)
	})
	t.Run("twice aborts them, to do again", func(t *testing.T) {
		f := newBatchFixture(t, 100, 2*time.Second)
		cmd, out := f.start(t)
		deadline := time.Now().Add(30 * time.Second)
		for len(f.mock.Requests()) < 8 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		_ = cmd.Process.Signal(os.Interrupt)
		// The second once the first is taken: two sent before the process
		// runs its handler are one signal.
		waitLog(t, out, regexp.MustCompile(`(stopping)`), "stopping line")
		_ = cmd.Process.Signal(syscall.SIGINT)
		err := cmd.Wait()
		if exitCode(err) != batchStopped || !strings.Contains(out.String(), "aborting") {
			t.Fatalf("exit %d:\n%s", exitCode(err), out)
		}
		canceled := 0
		for _, st := range f.records(t) {
			if st[0] == "canceled" {
				canceled++
			}
		}
		if canceled == 0 {
			t.Fatalf("no canceled records: %v\n%s", f.records(t), out)
		}
		cmd, out = f.start(t, "--concurrency", "100")
		if err := cmd.Wait(); exitCode(err) != 0 {
			t.Fatalf("resume: %v\n%s", err, out)
		}
		f.exactlyOnce(t)
	})
}

// The progress line says done / failed / in flight, rate, cost and, while
// paused, until when and why in a few words.
func TestBatchProgressText(t *testing.T) {
	paused := batch.Progress{Total: 1247, Skipped: 312, Served: 100, Failed: 3, InFlight: 4, Rate: 2.5, CostUSD: 0.125,
		Paused: true, Until: time.Now().Add(30 * time.Second),
		Reason: "every target is down or overloaded: route default: every target failed: anthropic/claude-sonnet-4-5 overloaded 529 ×5"}
	for _, tt := range []struct {
		name string
		p    batch.Progress
		bar  bool
		want []string
		not  []string
	}{
		{"running", batch.Progress{Total: 10, Served: 5, InFlight: 2, Rate: 1}, true,
			[]string{"[##########..........] 5/10 done", "0 failed", "2 in flight", "1.0/s", "ETA 5s", "$0.0000"}, []string{"paused"}},
		{"paused", paused, false,
			[]string{"415/1247 done", "3 failed", "4 in flight", "$0.1250", "paused until ", "(in 30s): every target is down or overloaded"},
			[]string{"ETA", "route default", "["}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			checkText(t, "progress", progressText(tt.p, tt.bar), tt.want, tt.not)
		})
	}
}
