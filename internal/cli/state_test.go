package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmguard/llmguard/mock"
	"github.com/llmguard/llmguard/state/redisstore/redistest"
)

// countedMock starts a mock whose Anthropic calls are counted.
func countedMock(t *testing.T) (url string, calls *atomic.Int64) {
	t.Helper()
	calls = &atomic.Int64{}
	m := mock.New(nil)
	ms := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/messages" {
			calls.Add(1)
		}
		m.ServeHTTP(w, r)
	}))
	t.Cleanup(ms.Close)
	return ms.URL, calls
}

// replicaConfig is one replica's config: one target on the mock whose
// model carries a mock fault spec, a breaker that opens on a 50% failure
// rate (from 2 calls, beyond chance) for 30s, no retries, a 2s deadline
// (so a call does not wait the cooldown out) and the given state block.
func replicaConfig(t *testing.T, mockURL, fault, stateBlock string) string {
	return replicaConfigTimes(t, mockURL, fault, "2s", "30s", stateBlock)
}

// replicaConfigTimes is replicaConfig with the route's deadline and the
// breaker's initial cooldown.
func replicaConfigTimes(t *testing.T, mockURL, fault, deadline, cooldown, stateBlock string) string {
	t.Helper()
	model := "claude-sonnet-4-5"
	if fault != "" {
		model += "+fault=" + fault
	}
	return writeConfig(t, "providers:\n  anthropic: {base_url: "+mockURL+", api_key: test-key}\n"+
		"routes:\n  default:\n    targets: ['anthropic/"+model+"']\n"+
		"    timeout: "+deadline+"\n    retry: {max_attempts: 1}\n"+
		"    breaker: {failures: 2, failure_ratio: 0.5, min_calls: 2, probes: 1, initial_cooldown: "+cooldown+"}\n"+stateBlock)
}

// redisState is the state block of replicas sharing srv. Its timeout is
// a second, not 50ms: these tests are about sharing and Redis killed, and
// on a loaded machine a round trip can take longer than 50ms, which would
// switch a replica to local state (TestRedisSlow tests the timeout).
func redisState(srv *redistest.Server) string {
	return "state: {backend: redis, redis_url: " + srv.URL() + ", timeout: 1s}\n"
}

// eachState runs test as subtest "redis", replicas sharing srv (emptied
// first), then as "memory", each replica on its own state.
func eachState(t *testing.T, srv *redistest.Server, test func(t *testing.T, state string, shared bool)) {
	t.Run("redis", func(t *testing.T) {
		redistest.Command(srv.Addr(), "FLUSHALL")
		test(t, redisState(srv), true)
	})
	t.Run("memory", func(t *testing.T) { test(t, "", false) })
}

// replicas starts two `llmguard serve` replicas, A and B, of the config
// file cfg and returns them with their base URLs; they are stopped when
// the test ends, their stderr logged if it failed.
func replicas(t *testing.T, cfg string) (a, b *running, ua, ub string) {
	t.Helper()
	a, uas := startCommand(t, nil, 1, "serve", "--addr", "127.0.0.1:0", "--config", cfg)
	b, ubs := startCommand(t, nil, 1, "serve", "--addr", "127.0.0.1:0", "--config", cfg)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("A: %s\nB: %s", a.stderr, b.stderr)
		}
		a.stop()
		b.stop()
	})
	return a, b, uas[0], ubs[0]
}

// Two `llmguard serve` replicas on one Redis: a breaker opened through A
// keeps B's calls off the failing target (with memory state, B calls it).
func TestReplicasShareBreaker(t *testing.T) {
	srv := redistest.Start(t)
	eachState(t, srv, func(t *testing.T, state string, shared bool) {
		mockURL, calls := countedMock(t)
		a, _, ua, ub := replicas(t, replicaConfig(t, mockURL, "529", state))
		for i := range 4 { // 4 failures of 4 calls: beyond chance for a 50% trigger
			if status, body := postMessage(t, ua); status == 200 {
				t.Fatalf("request %d through A: 200 from a target failing with 529: %s", i, body)
			}
		}
		before := calls.Load()
		status, body := postMessage(t, ub)
		reached := calls.Load() - before
		if shared && reached != 0 {
			t.Errorf("B's request reached the target %d time(s) after A opened its breaker (status %d: %s)", reached, status, body)
		}
		if !shared && reached != 1 {
			t.Errorf("with memory state B's request reached the target %d times, want 1", reached)
		}
		if shared && !strings.Contains(string(body), "breaker open") {
			t.Errorf("B answered %d %s, want the breaker-open refusal", status, body)
		}
		if shared && !strings.Contains(a.stderr.String(), "state: redis at "+srv.Addr()+" (fallback: local)") {
			t.Errorf("no start line on A's stderr: %s", a.stderr)
		}
	})
}

// Redis killed (SIGKILL) under a replica's traffic: every request is
// answered, and the replica shares again once Redis is back.
func TestServeRedisKilled(t *testing.T) {
	srv := redistest.Start(t)
	mockURL, _ := countedMock(t)
	cfg := replicaConfig(t, mockURL, "", redisState(srv))
	a, ua := startCommand(t, nil, 1, "serve", "--addr", "127.0.0.1:0", "--config", cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range 30 {
		if i == 10 {
			srv.Kill()
		}
		if i == 20 {
			if m := scrape(t, ua[0]); !strings.Contains(m, "llmguard_state_shared 0") || !strings.Contains(m, "llmguard_state_outages_total 1") ||
				strings.Contains(m, "llmguard_state_local_total 0") {
				t.Errorf("metrics with Redis down:\n%s", m)
			}
			srv.Restart()
		}
		if status, body := postMessage(t, ua[0]); status != 200 {
			t.Fatalf("request %d: %d %s", i, status, body)
		}
	}
	for !strings.Contains(a.stderr.String(), "sharing state") {
		if ctx.Err() != nil {
			t.Fatalf("no recovery logged 30s after Redis restarted: %s", a.stderr)
		}
		postMessage(t, ua[0])
		time.Sleep(50 * time.Millisecond)
	}
	if m := scrape(t, ua[0]); !strings.Contains(m, "llmguard_state_shared 1") {
		t.Errorf("metrics after recovery:\n%s", m)
	}
	if n := strings.Count(a.stderr.String(), "redis unreachable"); n != 1 {
		t.Errorf("outage logged %d times, want once: %s", n, a.stderr)
	}
	// Sharing resumed: the replica's records are in Redis again.
	if status, body := postMessage(t, ua[0]); status != 200 {
		t.Fatalf("request after recovery: %d %s", status, body)
	}
	// (A success's count is written just after the answer: wait for it.)
	keys, err := redistest.Command(srv.Addr(), "DBSIZE")
	for deadline := time.Now().Add(5 * time.Second); err == nil && keys == "0" && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		keys, err = redistest.Command(srv.Addr(), "DBSIZE")
	}
	if err != nil || keys == "0" {
		t.Errorf("DBSIZE after recovery = %q, %v: the replica writes nothing to Redis", keys, err)
	}
	a.stop()
}

// After the target recovers, one probe reaches it, whichever replica the
// calls arrive at; the others wait for its report (with memory state each
// replica would send its own).
func TestReplicasOneProbe(t *testing.T) {
	srv := redistest.Start(t)
	mockURL, calls := countedMock(t)
	// Four overloads open the breaker for 1s; then the target answers,
	// slowly (2s), so that the probe is in flight while the other calls ask.
	cfg := replicaConfigTimes(t, mockURL, "529,529,529,529,200@2s", "10s", "1s",
		redisState(srv))
	_, _, ua, ub := replicas(t, cfg)
	for i := range 4 {
		if status, body := postMessage(t, ua); status == 200 {
			t.Fatalf("request %d: 200 from an overloaded target: %s", i, body)
		}
	}
	time.Sleep(1200 * time.Millisecond) // the cooldown ends: half-open
	before := calls.Load()
	var wg sync.WaitGroup
	statuses := make([]int, 6)
	for i := range 6 {
		base := ua
		if i%2 == 1 {
			base = ub
		}
		wg.Go(func() { statuses[i], _ = postMessage(t, base) })
	}
	// Once the probe reached the target, the others have 300ms to reach it
	// too (they must not): the probe is still in flight (2s).
	for deadline := time.Now().Add(5 * time.Second); calls.Load() == before && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	if n := calls.Load() - before; n != 1 {
		t.Errorf("%d calls reached the recovering target while its probe was in flight, want 1", n)
	}
	wg.Wait()
	for i, s := range statuses {
		if s != 200 {
			t.Errorf("call %d: status %d after the target recovered", i, s)
		}
	}
}

// doctor checks the shared store: it answers (which server), or it does
// not, and then says what that means.
func TestDoctorState(t *testing.T) {
	srv := redistest.Start(t)
	healthy := upstream(t, nil, 0)
	run := func() (int, string) {
		cfg := writeConfig(t, "providers:\n  anthropic: {base_url: "+healthy+", api_key: sk-ant-api03-GOODGOODGOODGOODGOOD1234}\n"+
			"state: {backend: redis, redis_url: 'redis://:pw-secret@"+srv.Addr()+"'}\n")
		var out bytes.Buffer
		env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }}
		code := MainEnv(context.Background(), []string{"doctor", "--timeout", "5s", "--config", cfg}, env)
		return code, out.String()
	}
	redistest.Command(srv.Addr(), "CONFIG", "SET", "requirepass", "pw-secret")
	code, out := run()
	if code != 0 || !strings.Contains(out, "✓ redis at "+srv.Addr()+" answers (redis ") {
		t.Errorf("doctor with Redis up: exit %d\n%s", code, out)
	}
	srv.Kill()
	code, out = run()
	if code != 1 || !strings.Contains(out, "✗ redis at "+srv.Addr()+" does not answer") || !strings.Contains(out, "fallback: local") {
		t.Errorf("doctor with Redis down: exit %d\n%s", code, out)
	}
	if strings.Contains(out, "pw-secret") {
		t.Errorf("doctor printed the Redis password:\n%s", out)
	}
}

// scrape returns the llmguard_state_ lines of base's /metrics.
func scrape(t *testing.T, base string) string {
	t.Helper()
	_, b := send(t, "GET", base+"/metrics", "")
	var lines []string
	for l := range strings.Lines(string(b)) {
		if strings.HasPrefix(l, "llmguard_state_") {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "")
}

// A `retry-after: 5` that A's call got from a target makes B's calls skip
// it for the other target of the route while the wait lasts (with memory
// state B calls it: the target answers again by then).
func TestReplicasShareServerWait(t *testing.T) {
	srv := redistest.Start(t)
	eachState(t, srv, func(t *testing.T, state string, shared bool) {
		var limited atomic.Int64 // requests for the rate-limited model
		m := mock.New(nil)
		ms := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if r.URL.Path == "/v1/messages" && strings.Contains(string(body), "rate_limit") {
				limited.Add(1)
			}
			m.ServeHTTP(w, r)
		}))
		t.Cleanup(ms.Close)
		cfg := writeConfig(t, "providers:\n  anthropic: {base_url: "+ms.URL+", api_key: test-key}\n"+
			"routes:\n  default:\n    targets: ['anthropic/claude-sonnet-4-5+fault=rate_limit:5,200', 'anthropic/claude-haiku-4-5']\n"+
			"    timeout: 2s\n    retry: {max_attempts: 1}\n"+state)
		_, _, ua, ub := replicas(t, cfg)
		if status, body := postMessage(t, ua); status != 200 || limited.Load() != 1 {
			t.Fatalf("A: %d %s after %d request(s) to the rate-limited target, want 200 from the fallback after 1", status, body, limited.Load())
		}
		for i := range 3 {
			if status, body := postMessage(t, ub); status != 200 {
				t.Fatalf("B's request %d: %d %s", i, status, body)
			}
		}
		reached := limited.Load() - 1
		if shared && reached != 0 {
			t.Errorf("B's requests reached the target %d time(s) within the retry-after: 5 A got", reached)
		}
		if !shared && reached != 3 {
			t.Errorf("with memory state B's requests reached the target %d times, want 3", reached)
		}
	})
}

// The same Idempotency-Key sent to A and B at once: one upstream call, and
// both answer with it (with memory state each replica calls).
func TestReplicasShareIdempotency(t *testing.T) {
	srv := redistest.Start(t)
	eachState(t, srv, func(t *testing.T, state string, shared bool) {
		mockURL, calls := countedMock(t)
		// The answer takes 300ms, so both requests are in flight at once.
		_, _, ua, ub := replicas(t, replicaConfigTimes(t, mockURL, "200@300ms", "5s", "30s", state))
		var wg sync.WaitGroup
		statuses, bodies := make([]int, 2), make([][]byte, 2)
		for i, base := range []string{ua, ub} {
			wg.Go(func() { statuses[i], bodies[i] = postMessage(t, base, "Idempotency-Key", "order-42") })
		}
		wg.Wait()
		if statuses[0] != 200 || statuses[1] != 200 {
			t.Fatalf("statuses %v: %s | %s", statuses, bodies[0], bodies[1])
		}
		n := calls.Load()
		if shared && (n != 1 || !bytes.Equal(bodies[0], bodies[1])) {
			t.Errorf("%d upstream calls for one Idempotency-Key sent to A and B, want 1 and the same answer:\nA: %s\nB: %s", n, bodies[0], bodies[1])
		}
		if !shared && n != 2 {
			t.Errorf("with memory state: %d upstream calls, want 2", n)
		}
	})
}
