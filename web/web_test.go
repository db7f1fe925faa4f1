package web

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/resilience"
)

// TestDecoderWasmFresh: the committed ui/decoder.wasm is what go generate
// builds from the classifier today (run go generate ./web after changing
// classify).
func TestDecoderWasmFresh(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the classifier for WebAssembly")
	}
	out := filepath.Join(t.TempDir(), "decoder.wasm")
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags=-s", "-o", out, "./decoder")
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	built, _ := os.ReadFile(out)
	committed, err := os.ReadFile("ui/decoder.wasm")
	if err != nil || !bytes.Equal(built, committed) {
		t.Fatalf("ui/decoder.wasm is stale (%d bytes committed, %d built): run go generate ./web", len(committed), len(built))
	}
}

// TestDecoderPageSelfContained: the page needs nothing but itself.
func TestDecoderPageSelfContained(t *testing.T) {
	p := string(DecoderPage())
	for _, ref := range []string{`src="`, `rel="stylesheet"`} {
		if strings.Contains(p, ref) {
			t.Errorf("the page still loads a file (%q)", ref)
		}
	}
	for _, want := range []string{`id="decoder-wasm"`, "llmguardDecode", "Nothing you paste leaves this machine"} {
		if !strings.Contains(p, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// TestEvents: /ui/events streams snapshots with each configured target's
// breaker, counters, latencies and the timeline by class.
func TestEvents(t *testing.T) {
	const a = "openai/gpt-4o"
	live := NewLive(map[string][]string{"default": {a}})
	now := time.Now()
	live.Event(resilience.Event{Kind: resilience.EventSuccess, Time: now, Target: a, Attempt: 1, Elapsed: 40 * time.Millisecond})
	live.Event(resilience.Event{Kind: resilience.EventFailure, Time: now, Target: a, Attempt: 1, Verdict: &classify.Verdict{Class: classify.Overloaded}})
	live.Event(resilience.Event{Kind: resilience.EventSuccess, Time: now, Target: "openai/invented", Attempt: 1})
	h := Handler(&Options{Live: live, Routes: map[string][]string{"default": {a}}, Interval: 10 * time.Millisecond,
		Status: func() []resilience.TargetStatus {
			return []resilience.TargetStatus{{Target: a, Breaker: "open", Successes: 1, Failures: 1}, {Target: "openai/invented"}}
		}})
	srv := httptest.NewServer(h)
	defer srv.Close()
	res, err := http.Get(srv.URL + "/ui/events")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	var snaps []Snapshot
	for len(snaps) < 2 && sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var s Snapshot
			if err := json.Unmarshal([]byte(d), &s); err != nil {
				t.Fatal(err)
			}
			snaps = append(snaps, s)
		}
	}
	if len(snaps) < 2 {
		t.Fatalf("%d snapshots, want 2 (%v)", len(snaps), sc.Err())
	}
	s := snaps[0]
	if len(s.Targets) != 1 || s.Targets[0].Target != a || s.Targets[0].Breaker != "open" {
		t.Fatalf("targets %+v: want only %s, open", s.Targets, a)
	}
	if r := s.Targets[0].SuccessRate; r == nil || *r != 0.5 {
		t.Errorf("success rate %v, want 0.5", r)
	}
	if p := s.Targets[0].P50ms; p == nil || *p != 40 {
		t.Errorf("p50 %v, want 40 ms", p)
	}
	ok, ov := s.Timeline.Classes["ok"], s.Timeline.Classes["overloaded"]
	if len(ok) != 60 || ok[59] != 2 || ov[59] != 1 {
		t.Errorf("timeline %v", s.Timeline.Classes)
	}
	for _, path := range []string{"/ui/", "/ui/app.js", "/ui/decode.html", "/ui/style.css"} {
		r, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != 200 || r.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("%s: %d, CSP %q", path, r.StatusCode, r.Header.Get("Content-Security-Policy"))
		}
	}
}

// TestTimelineShifts: an hour later the old minutes are gone.
func TestTimelineShifts(t *testing.T) {
	l := NewLive(nil)
	t0 := time.Unix(1_800_000_000, 0)
	l.Event(resilience.Event{Kind: resilience.EventSuccess, Time: t0, Target: "x", Attempt: 1})
	tl, _ := l.snapshot(t0.Add(2 * time.Minute))
	if got := tl.Classes["ok"][57]; got != 1 {
		t.Errorf("two minutes later, bucket 57 = %d, want 1", got)
	}
	tl, _ = l.snapshot(t0.Add(61 * time.Minute))
	for i, n := range tl.Classes["ok"] {
		if n != 0 {
			t.Errorf("an hour later, bucket %d = %d", i, n)
		}
	}
}
