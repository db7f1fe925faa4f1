package gateway

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmguard/llmguard/mock"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/resilience"
)

// The side-by-side benchmark of the issue: one zero-latency mock on
// loopback, called directly, through a plain httputil.ReverseProxy (which
// forwards bytes without parsing them: the floor any gateway pays) and
// through the gateway (which parses, routes through the engine and the
// OpenAI adapter, and re-encodes). Every client request is the same
// OpenAI chat completion; the mock answers it in full.
//
//	go test -run '^$' -bench 'Gateway' -benchtime 5000x ./gateway/

type benchSetup struct {
	direct, proxy, gateway string // URLs of the chat completions endpoint
	client                 *http.Client
	closers                []func()
}

func (b *benchSetup) close() {
	for _, c := range b.closers {
		c()
	}
}

func newBench(tb testing.TB) *benchSetup {
	tb.Helper()
	quiet := slog.New(slog.DiscardHandler)
	ms := httptest.NewServer(mock.New(&mock.Config{MaxRequests: 16}))
	u, _ := url.Parse(ms.URL)
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.Transport = provider.NewHTTPClient(nil).Transport
	rp.ErrorLog = slog.NewLogLogger(quiet.Handler(), slog.LevelError)
	ps := httptest.NewServer(rp)
	srv, _ := newGateway(tb, "providers:\n  openai: {base_url: "+ms.URL+"/v1, api_key: bench-key}\n"+
		"routes:\n  default:\n    targets: [openai/gpt-4o]\n", nil, nil, nil)
	gs := httptest.NewServer(srv.Handler())
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 128, IdleConnTimeout: time.Minute}}
	return &benchSetup{direct: ms.URL + "/v1/chat/completions", proxy: ps.URL + "/v1/chat/completions",
		gateway: gs.URL + "/v1/chat/completions", client: client,
		closers: []func(){gs.Close, ps.Close, ms.Close, client.CloseIdleConnections}}
}

const benchBody = `{"model":"%s","messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Summarise the benefits of circuit breakers in two sentences"}],"max_tokens":128,"temperature":0.2}`

// body is benchBody for target: the model is the route "default" on the
// gateway, gpt-4o on the direct and proxy paths; streamed if stream.
func (b *benchSetup) body(target string, stream bool) string {
	model := "gpt-4o"
	if target == b.gateway {
		model = "default"
	}
	s := fmt.Sprintf(benchBody, model)
	if stream {
		s = strings.Replace(s, `"max_tokens"`, `"stream":true,"max_tokens"`, 1)
	}
	return s
}

// call posts one request and reads the whole answer.
func (b *benchSetup) call(tb testing.TB, target string) {
	postJSON(tb, b.client, target, strings.NewReader(b.body(target, false)))
}

// benchPost posts body to url as the benchmarks' client (JSON, the bench key).
func benchPost(client *http.Client, url string, body io.Reader) (*http.Response, error) {
	req, _ := http.NewRequest(http.MethodPost, url, body)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer bench-key")
	return client.Do(req)
}

// postJSON posts body to url as the benchmarks' client and reads the whole
// answer, which must be a 200 with a body.
func postJSON(tb testing.TB, client *http.Client, url string, body io.Reader) {
	res, err := benchPost(client, url, body)
	if err != nil {
		tb.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || n == 0 {
		tb.Fatalf("%s: status %d", url, res.StatusCode)
	}
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(float64(len(s)-1)*p)]
}

// quantiles are the percentiles the latency benchmarks report.
var quantiles = []struct {
	name string
	p    float64
}{{"p50", 0.50}, {"p99", 0.99}}

// micros is d in microseconds, the unit the benchmarks report.
func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// interleave warms each path with one call, then makes b.N rounds of one
// call on each path in turn, timed, and returns each path's latencies.
func interleave(b *testing.B, paths []string, call func(string)) [][]time.Duration {
	for _, p := range paths { // warm connections
		call(p)
	}
	lat := make([][]time.Duration, len(paths))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, p := range paths {
			t0 := time.Now()
			call(p)
			lat[j] = append(lat[j], time.Since(t0))
		}
	}
	b.StopTimer()
	return lat
}

// BenchmarkGatewaySequential interleaves direct, proxy and gateway calls
// one at a time and reports each path's p50/p99 latency and the latency
// the proxy and the gateway add over the direct call.
func BenchmarkGatewaySequential(b *testing.B) {
	bs := newBench(b)
	defer bs.close()
	lat := interleave(b, []string{bs.direct, bs.proxy, bs.gateway}, func(p string) { bs.call(b, p) })
	for _, q := range quantiles {
		d, px, gw := percentile(lat[0], q.p), percentile(lat[1], q.p), percentile(lat[2], q.p)
		b.ReportMetric(micros(d), "direct-"+q.name+"-µs")
		b.ReportMetric(micros(px-d), "proxy-added-"+q.name+"-µs")
		b.ReportMetric(micros(gw-d), "gateway-added-"+q.name+"-µs")
		if px > d {
			b.ReportMetric(float64(gw-d)/float64(px-d), "gateway/proxy-added-"+q.name)
		}
	}
	b.ReportMetric(0, "ns/op") // per-op time mixes three paths; the metrics above are the result
}

// BenchmarkGatewayConcurrent32 measures throughput with 32 concurrent
// clients. Each iteration sends a batch of 32×8 requests on each path in
// turn (direct, proxy, gateway) so the three share the machine's varying
// load; it reports each path's median batch throughput in req/s.
func BenchmarkGatewayConcurrent32(b *testing.B) {
	bs := newBench(b)
	defer bs.close()
	const clients, perClient = 32, 8
	b.ReportAllocs()
	bs.throughput(b, clients, perClient, func(url string) { bs.call(b, url) }, "req/s", "gateway/proxy-throughput")
}

// throughput runs, each iteration, a batch of clients×perClient calls of do
// on each path in turn (direct, proxy, gateway), so the three share the
// machine's varying load, and reports each path's median batch rate
// (direct-, proxy-, gateway-<unit>) and the gateway's over the proxy's
// (ratio).
func (bs *benchSetup) throughput(b *testing.B, clients, perClient int, do func(url string), unit, ratio string) {
	paths := []string{bs.direct, bs.proxy, bs.gateway}
	batch := func(url string) float64 {
		var wg sync.WaitGroup
		t0 := time.Now()
		for range clients {
			wg.Go(func() {
				for range perClient {
					do(url)
				}
			})
		}
		wg.Wait()
		return float64(clients*perClient) / time.Since(t0).Seconds()
	}
	for _, p := range paths { // open the connection pools
		batch(p)
	}
	rates := make([][]float64, len(paths))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, p := range paths {
			rates[j] = append(rates[j], batch(p))
		}
	}
	b.StopTimer()
	med := func(v []float64) float64 { s := slices.Clone(v); slices.Sort(s); return s[len(s)/2] }
	d, px, gw := med(rates[0]), med(rates[1]), med(rates[2])
	b.ReportMetric(d, "direct-"+unit)
	b.ReportMetric(px, "proxy-"+unit)
	b.ReportMetric(gw, "gateway-"+unit)
	b.ReportMetric(gw/px, ratio)
	b.ReportMetric(0, "ns/op") // per-op time mixes three paths; the metrics above are the result
}

// BenchmarkCodec measures the gateway's own work per request: decoding an
// OpenAI body and encoding the answer, without any I/O.
func BenchmarkCodec(b *testing.B) {
	body := []byte(fmt.Sprintf(benchBody, "default"))
	res := &provider.Response{Model: "gpt-4o", Text: strings.Repeat("All work and no play. ", 20), FinishReason: "stop",
		Usage: provider.Usage{InputTokens: 30, OutputTokens: 120}}
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := decodeOpenAI(body); err != nil {
			b.Fatal(err)
		}
		buf = appendOpenAIResponse(buf[:0], res, "chatcmpl-1", 1)
	}
	if !bytes.Contains(buf, []byte("All work")) {
		b.Fatal("bad encoding")
	}
}

// BenchmarkGatewayHeap sends b.N requests (8 clients) through the gateway
// and reports the live heap and goroutines after a GC, before and after:
// with -benchtime 100000x it shows memory stays flat.
func BenchmarkGatewayHeap(b *testing.B) {
	bs := newBench(b)
	defer bs.close()
	measure := func() (uint64, int) {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc, runtime.NumGoroutine()
	}
	// Warm up with the same concurrency, so the connection pools (and
	// their goroutines and buffers) exist before the first measurement.
	par := 4 * runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for range par {
		wg.Go(func() {
			for range 500 {
				bs.call(b, bs.gateway)
			}
		})
	}
	wg.Wait()
	heap0, g0 := measure()
	b.ResetTimer()
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			bs.call(b, bs.gateway)
		}
	})
	b.StopTimer()
	heap1, g1 := measure()
	b.ReportMetric(float64(heap0)/1024, "heap-before-KiB")
	b.ReportMetric(float64(heap1)/1024, "heap-after-KiB")
	b.ReportMetric(float64(g1-g0), "goroutines-delta")
}

// fixedEngine answers every Chat with the same result, to measure the
// handler's own work (decode, route, encode, headers) without I/O.
type fixedEngine struct {
	Engine
	res *resilience.Result
}

func (f fixedEngine) Chat(context.Context, *resilience.Call) (*resilience.Result, error) {
	r := *f.res
	resp := *r.Response
	r.Response = &resp
	return &r, nil
}
func (fixedEngine) Routes() map[string][]string {
	return map[string][]string{"default": {"openai/gpt-4o"}}
}

// BenchmarkHandler is the gateway's own cost per non-streaming request in
// each dialect: everything but the engine and the network.
func BenchmarkHandler(b *testing.B) {
	res := &resilience.Result{Target: "openai/gpt-4o", Attempts: 1, Response: &provider.Response{ID: "chatcmpl-1",
		Model: "gpt-4o", Text: strings.Repeat("All work and no play. ", 20), FinishReason: "stop",
		Usage: provider.Usage{InputTokens: 30, OutputTokens: 120}, RequestID: "req_1"}}
	srv, err := New(&Options{Engine: fixedEngine{res: res}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	h := srv.Handler()
	for _, d := range []struct{ name, path, body string }{
		{"openai", "/v1/chat/completions", fmt.Sprintf(benchBody, "default")},
		{"anthropic", "/v1/messages", `{"model":"default","max_tokens":128,"system":"You are terse.","messages":[{"role":"user","content":"Summarise the benefits of circuit breakers in two sentences"}]}`},
	} {
		b.Run(d.name, func(b *testing.B) {
			b.ReportAllocs()
			rd := strings.NewReader(d.body)
			for i := 0; i < b.N; i++ {
				rd.Reset(d.body)
				req := httptest.NewRequest(http.MethodPost, d.path, rd)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatalf("%d %s", rec.Code, rec.Body)
				}
			}
		})
	}
}

// BenchmarkGatewayStream interleaves streaming calls on the three paths and
// reports the p50 time to the first content byte and to the end of the
// stream, as added over the direct call.
func BenchmarkGatewayStream(b *testing.B) {
	bs := newBench(b)
	defer bs.close()
	paths := []string{bs.direct, bs.proxy, bs.gateway}
	stream := func(target string) (first, total time.Duration) {
		t0 := time.Now()
		res, err := benchPost(bs.client, target, strings.NewReader(bs.body(target, true)))
		if err != nil {
			b.Fatal(err)
		}
		defer res.Body.Close()
		buf := make([]byte, 4096)
		for {
			n, err := res.Body.Read(buf)
			if n > 0 && first == 0 && bytes.Contains(buf[:n], []byte(`"content":"`)) && !bytes.Contains(buf[:n], []byte(`"content":""`)) {
				first = time.Since(t0)
			}
			if err != nil {
				break
			}
		}
		if res.StatusCode != 200 {
			b.Fatalf("%s: %d", target, res.StatusCode)
		}
		if first == 0 {
			first = time.Since(t0)
		}
		return first, time.Since(t0)
	}
	for _, p := range paths {
		stream(p)
	}
	firsts := make([][]time.Duration, len(paths))
	totals := make([][]time.Duration, len(paths))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, p := range paths {
			f, tot := stream(p)
			firsts[j] = append(firsts[j], f)
			totals[j] = append(totals[j], tot)
		}
	}
	b.StopTimer()
	b.ReportMetric(micros(percentile(firsts[0], .5)), "direct-first-p50-µs")
	b.ReportMetric(micros(percentile(firsts[1], .5)-percentile(firsts[0], .5)), "proxy-added-first-p50-µs")
	b.ReportMetric(micros(percentile(firsts[2], .5)-percentile(firsts[0], .5)), "gateway-added-first-p50-µs")
	b.ReportMetric(micros(percentile(totals[0], .5)), "direct-total-p50-µs")
	b.ReportMetric(micros(percentile(totals[1], .5)-percentile(totals[0], .5)), "proxy-added-total-p50-µs")
	b.ReportMetric(micros(percentile(totals[2], .5)-percentile(totals[0], .5)), "gateway-added-total-p50-µs")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkGatewayPath sends sequential requests through the gateway only,
// for profiling its path (decode, engine, adapter round trip, encode).
func BenchmarkGatewayPath(b *testing.B) {
	bs := newBench(b)
	defer bs.close()
	bs.call(b, bs.gateway)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		bs.call(b, bs.gateway)
	}
}

// BenchmarkGatewayStreamThroughput measures streams per second with 1 and
// 50 concurrent clients, each reading whole streams one after the other.
// Each iteration runs a batch of conns×8 streams on each path in turn
// (direct, proxy, gateway) so the three share the machine's varying load;
// it reports each path's median batch throughput and the gateway's over
// the proxy's.
func BenchmarkGatewayStreamThroughput(b *testing.B) {
	for _, conns := range []int{1, 50} {
		b.Run(fmt.Sprintf("conns=%d", conns), func(b *testing.B) {
			bs := newBench(b)
			defer bs.close()
			const perClient = 8
			stream := func(target string) {
				res, err := benchPost(bs.client, target, strings.NewReader(bs.body(target, true)))
				if err != nil {
					b.Error(err)
					return
				}
				n, _ := io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != 200 || n == 0 {
					b.Errorf("%s: status %d", target, res.StatusCode)
				}
			}
			bs.throughput(b, conns, perClient, stream, "streams/s", "gateway/proxy-streams")
		})
	}
}

// discardEvents is an eventWriter that keeps nothing.
type discardEvents struct{}

func (discardEvents) Event(string, []byte) error { return nil }

// BenchmarkRelayAnthropicDelta relays one content_block_delta event of an
// Anthropic stream to an Anthropic client (what most of a relayed stream
// is): the encoder's cost per event, without the network.
func BenchmarkRelayAnthropicDelta(b *testing.B) {
	s := &anStream{w: discardEvents{}, open: -1}
	start := provider.RawEvent{Name: "content_block_start", Data: []byte(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)}
	_ = s.chunk(&provider.Chunk{Raw: &start})
	evs := make([]provider.RawEvent, 64)
	for i := range evs {
		evs[i] = provider.RawEvent{Name: "content_block_delta",
			Data: []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello \"world\"\n\u00e9"}}`)}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_ = s.chunk(&provider.Chunk{Text: "x", Raw: &evs[i%len(evs)]})
	}
}
