package batch

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/catalog"
	"github.com/llmguard/llmguard/gateway"
	"github.com/llmguard/llmguard/mock"
	"github.com/llmguard/llmguard/resilience"
)

// Issue 16's benchmark: 10,000 items against a zero-latency mock at
// concurrency 64, through the runner, through the engine alone (what the
// runner adds is the difference) and through the gateway (the runner must
// keep up with it: at least 0.9x its items per second). Each reports
// items/s and the process's CPU per item (user+system, the mock's and the
// HTTP client's included).
//
//	go test -run '^$' -bench BenchmarkBatch10k -benchtime 3x ./batch/
func BenchmarkBatch10k(b *testing.B) {
	const items, conc = 10_000, 64
	m := mock.New(&mock.Config{MaxRequests: 1000})
	ts := httptest.NewServer(m)
	b.Cleanup(ts.Close)
	tr := ts.Client().Transport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 2 * conc
	s := newStackOn(b, m, ts.URL, &http.Client{Transport: tr}, &resilience.Route{
		Targets: []resilience.Target{{Name: "anthropic/claude-sonnet-4-5"}}})
	lines := ownItems(items)
	in, err := Read("items.jsonl", []byte(joinLines(lines)))
	if err != nil {
		b.Fatal(err)
	}

	b.Run("runner", func(b *testing.B) {
		measure(b, items, func() {
			out := filepath.Join(b.TempDir(), "results.jsonl")
			r, err := New(s.eng, &Config{Concurrency: conc})
			if err != nil {
				b.Fatal(err)
			}
			sum, err := r.Run(context.Background(), in, out)
			if err != nil || sum.Served != items {
				b.Fatalf("run: %v %+v", err, sum)
			}
		})
	})

	// The same requests the runner sends (its template rendered), straight
	// to the engine by 64 workers.
	r, _ := New(s.eng, nil)
	reqs := make([]*item, items)
	for i, l := range lines {
		reqs[i] = &item{}
		if err := r.decodeOwn(reqs[i], []byte(l)); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("engine", func(b *testing.B) {
		measure(b, items, func() {
			parallel(b, items, conc, func(i int) error {
				_, err := s.eng.Chat(context.Background(), &resilience.Call{Route: "default", Request: reqs[i].req})
				return err
			})
		})
	})

	gw, err := gateway.New(&gateway.Options{Engine: s.eng, Catalog: &catalog.Catalog{}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	gs := httptest.NewServer(gw.Handler())
	b.Cleanup(gs.Close)
	gtr := gs.Client().Transport.(*http.Transport).Clone()
	gtr.MaxIdleConnsPerHost = 2 * conc
	client := &http.Client{Transport: gtr}
	bodies := make([][]byte, items)
	for i := range bodies {
		text, _ := json.Marshal(reqs[i].req.Messages[0].Content[0].Text)
		bodies[i] = fmt.Appendf(nil, `{"model":"default","max_tokens":%d,"messages":[{"role":"user","content":%s}]}`,
			DefaultMaxTokens, text)
	}
	b.Run("gateway", func(b *testing.B) {
		measure(b, items, func() {
			parallel(b, items, conc, func(i int) error {
				req, _ := http.NewRequest("POST", gs.URL+"/v1/messages", bytes.NewReader(bodies[i]))
				req.Header.Set("content-type", "application/json")
				req.Header.Set("anthropic-version", "2023-06-01")
				res, err := client.Do(req)
				if err != nil {
					return err
				}
				defer res.Body.Close()
				var buf [4096]byte
				for {
					if _, err := res.Body.Read(buf[:]); err != nil {
						break
					}
				}
				if res.StatusCode != 200 {
					return fmt.Errorf("gateway: %s", res.Status)
				}
				return nil
			})
		})
	})
}

// measure runs fn b.N times, each over n items, and reports items/s and
// the process's CPU per item.
func measure(b *testing.B, n int, fn func()) {
	b.ReportAllocs()
	cpu0 := cpuTime()
	start := time.Now()
	for b.Loop() {
		fn()
	}
	wall, cpu := time.Since(start), cpuTime()-cpu0
	total := float64(n * b.N)
	b.ReportMetric(total/wall.Seconds(), "items/s")
	b.ReportMetric(float64(cpu.Microseconds())/total, "cpu-µs/item")
	b.ReportMetric(0, "ns/op")
}

// parallel calls fn for 0..n-1 from conc goroutines.
func parallel(b *testing.B, n, conc int, fn func(i int) error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// cpuTime is the process's user and system CPU so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func joinLines(lines []string) string {
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}
