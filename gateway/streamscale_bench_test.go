package gateway

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmguard/llmguard/config"
	"github.com/llmguard/llmguard/provider"
)

// The scaling benchmarks of issue 19: the same calls direct to an upstream,
// through a plain httputil.ReverseProxy and through the gateway, in one
// process, interleaved so the three share the machine's varying load.
// Each path's figures are per call: the process's CPU time (user+system,
// client and upstream included: subtract direct- for what the middle costs),
// heap allocations, socket writes by the middle server, and new upstream
// connections.
//
//	go test -run '^$' -bench 'StreamChunks|Conns' -benchtime 20x ./gateway/

// scaleUpstream answers OpenAI chat completions cheaply: a stream of as
// many content chunks as the prompt's "chunks=N" says (9 without one, the
// words of the plain answer: the gateway streams a plain call upstream),
// each event flushed as a model server sends tokens, then the finish
// chunk, the usage chunk and [DONE]; or, not streaming, a fixed
// completion. It counts the connections it accepts.
type scaleUpstream struct {
	*httptest.Server
	conns atomic.Int64
}

func newScaleUpstream() *scaleUpstream {
	u := &scaleUpstream{}
	u.Server = httptest.NewUnstartedServer(http.HandlerFunc(u.serve))
	u.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			u.conns.Add(1)
		}
	}
	u.Start()
	return u
}

const (
	scaleChunk = `{"id":"chatcmpl-Scale","object":"chat.completion.chunk","created":1,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"content":"tok "},"finish_reason":null}]}`
	scaleTail  = "data: {\"id\":\"chatcmpl-Scale\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-2024-08-06\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" +
		"data: {\"id\":\"chatcmpl-Scale\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-2024-08-06\",\"choices\":[],\"usage\":{\"prompt_tokens\":20,\"completion_tokens\":100,\"total_tokens\":120}}\n\n" +
		"data: [DONE]\n\n"
	scaleAnswer = `{"id":"chatcmpl-Scale","object":"chat.completion","created":1,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"message":{"role":"assistant","content":"Circuit breakers stop calls to a failing service."},"finish_reason":"stop"}],"usage":{"prompt_tokens":20,"completion_tokens":9,"total_tokens":29}}`
)

func (u *scaleUpstream) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if !bytes.Contains(body, []byte(`"stream":true`)) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, scaleAnswer)
		return
	}
	n := 9 // the words of scaleAnswer: what a streamed answer to a plain call says
	if _, rest, ok := bytes.Cut(body, []byte("chunks=")); ok {
		end := bytes.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
		if v, err := strconv.Atoi(string(rest[:max(end, 0)])); err == nil {
			n = v
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	f := w.(http.Flusher)
	ev := []byte("data: " + scaleChunk + "\n\n")
	for range n {
		_, _ = w.Write(ev)
		f.Flush()
	}
	_, _ = io.WriteString(w, scaleTail)
}

// countingListener counts the Write calls on the connections it accepts
// (each one a socket write).
type countingListener struct {
	net.Listener
	writes *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{Conn: c, writes: l.writes}, nil
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// scalePath is one way to the upstream: its URL, the model name it takes,
// and the socket writes of its server (nil for direct).
type scalePath struct {
	name, url, model string
	writes           *atomic.Int64
}

type scaleSetup struct {
	up     *scaleUpstream
	paths  []scalePath // direct, proxy, gateway
	client *http.Client
	close  func()
}

// newScale builds the three paths to one scaleUpstream, for clients
// concurrent callers. The proxy and the gateway reach the upstream over
// transports built as llmguard builds its own (provider.NewTransport; the
// gateway's sized by its configuration, as llmguard serve does).
func newScale(tb testing.TB, clients int) *scaleSetup {
	tb.Helper()
	quiet := slog.New(slog.DiscardHandler)
	up := newScaleUpstream()
	u, _ := url.Parse(up.URL)
	// The request body is read before it is forwarded: net/http's server
	// closes an inbound body once the response starts, and the transport's
	// last read of a forwarded body then tears the upstream connection
	// down mid-answer (golang/go#40747).
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(u)
		b, _ := io.ReadAll(pr.Out.Body)
		pr.Out.Body, pr.Out.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
	}}
	rp.Transport = provider.NewTransport(&provider.TransportConfig{MaxIdleConnsPerHost: max(clients, 64)})
	rp.ErrorLog = slog.NewLogLogger(quiet.Handler(), slog.LevelError)
	serve := func(h http.Handler) (*httptest.Server, *atomic.Int64) {
		s := httptest.NewUnstartedServer(h)
		n := new(atomic.Int64)
		s.Listener = countingListener{Listener: s.Listener, writes: n}
		s.Start()
		return s, n
	}
	ps, pw := serve(rp)
	yaml := "providers:\n  openai: {base_url: " + up.URL + "/v1, api_key: bench-key}\n" +
		"routes:\n  default:\n    targets: [openai/gpt-4o]\n"
	cfg, err := config.Parse("bench.yaml", []byte(yaml), nil)
	if err != nil {
		tb.Fatal(err)
	}
	srv, _ := newGateway(tb, yaml, provider.NewHTTPClient(cfg.Transport()), nil, nil)
	gs, gw := serve(srv.Handler())
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 3 * clients, MaxIdleConnsPerHost: clients, IdleConnTimeout: time.Minute}}
	return &scaleSetup{up: up, client: client,
		paths: []scalePath{
			{name: "direct", url: up.URL + "/v1/chat/completions", model: "gpt-4o"},
			{name: "proxy", url: ps.URL + "/v1/chat/completions", model: "gpt-4o", writes: pw},
			{name: "gateway", url: gs.URL + "/v1/chat/completions", model: "default", writes: gw},
		},
		close: func() {
			client.CloseIdleConnections()
			gs.Close()
			ps.Close()
			up.Close()
		}}
}

// call posts one chat completion (a stream of chunks content chunks when
// chunks > 0) on p and reads the whole answer.
func (s *scaleSetup) call(p scalePath, chunks int) error {
	body := `{"model":"` + p.model + `","messages":[{"role":"user","content":"Summarise the benefits of circuit breakers"}],"max_tokens":128}`
	if chunks > 0 {
		body = `{"model":"` + p.model + `","messages":[{"role":"user","content":"Summarise the benefits of circuit breakers (chunks=` +
			strconv.Itoa(chunks) + `)"}],"stream":true,"max_tokens":2048}`
	}
	req, _ := http.NewRequest(http.MethodPost, p.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer bench-key")
	res, err := s.client.Do(req)
	if err != nil {
		return err
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", p.name, err)
	case res.StatusCode != http.StatusOK:
		return fmt.Errorf("%s: status %d: %.200s", p.name, res.StatusCode, b)
	case chunks > 0 && bytes.Count(b, []byte(`"content":"tok "`)) != chunks:
		return fmt.Errorf("%s: %d of %d chunks", p.name, bytes.Count(b, []byte(`"content":"tok "`)), chunks)
	}
	return nil
}

// pathStats accumulates one path's measurements.
type pathStats struct {
	cpu              time.Duration
	allocs, bytes    uint64
	writes, upConns  int64
	calls            int
	wall             time.Duration
	ratePerIteration []float64
}

// run makes, b.N times, a batch of clients×perClient calls on each path
// in turn and reports each path's figures per call.
func (s *scaleSetup) run(b *testing.B, clients, perClient, chunks int) {
	batch := func(p scalePath) {
		var wg sync.WaitGroup
		for range clients {
			wg.Go(func() {
				for range perClient {
					if err := s.call(p, chunks); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
	}
	for _, p := range s.paths { // open the connection pools
		batch(p)
	}
	stats := make([]pathStats, len(s.paths))
	var ms runtime.MemStats
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, p := range s.paths {
			st := &stats[j]
			runtime.ReadMemStats(&ms)
			a0, by0 := ms.Mallocs, ms.TotalAlloc
			var w0 int64
			if p.writes != nil {
				w0 = p.writes.Load()
			}
			c0, cpu0, t0 := s.up.conns.Load(), processCPU(), time.Now()
			batch(p)
			wall := time.Since(t0)
			st.cpu += processCPU() - cpu0
			st.wall += wall
			st.upConns += s.up.conns.Load() - c0
			if p.writes != nil {
				st.writes += p.writes.Load() - w0
			}
			runtime.ReadMemStats(&ms)
			st.allocs += ms.Mallocs - a0
			st.bytes += ms.TotalAlloc - by0
			st.calls += clients * perClient
			st.ratePerIteration = append(st.ratePerIteration, float64(clients*perClient)/wall.Seconds())
		}
	}
	b.StopTimer()
	for j, p := range s.paths {
		st := &stats[j]
		n := float64(st.calls)
		b.ReportMetric(float64(st.cpu.Microseconds())/n, p.name+"-cpu-µs/op")
		b.ReportMetric(float64(st.allocs)/n, p.name+"-allocs/op")
		b.ReportMetric(float64(st.bytes)/n, p.name+"-B/op")
		b.ReportMetric(float64(st.upConns)/st.wall.Seconds(), p.name+"-upstream-conns/s")
		b.ReportMetric(median(st.ratePerIteration), p.name+"-calls/s")
		if p.writes != nil {
			b.ReportMetric(float64(st.writes)/n, p.name+"-writes/op")
		}
	}
	d, px, gw := stats[0], stats[1], stats[2]
	if add := px.cpu - d.cpu; add > 0 {
		b.ReportMetric(float64(gw.cpu-d.cpu)/float64(add), "gateway/proxy-added-cpu")
	}
	b.ReportMetric(median(gw.ratePerIteration)/median(px.ratePerIteration), "gateway/proxy-throughput")
	b.ReportMetric(0, "ns/op") // per-op time mixes three paths; the metrics above are the result
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	for i := 1; i < len(s); i++ { // insertion sort: a handful of values
		for k := i; k > 0 && s[k] < s[k-1]; k-- {
			s[k], s[k-1] = s[k-1], s[k]
		}
	}
	return s[len(s)/2]
}

// BenchmarkStreamChunks streams answers of 10, 100 and 1,000 chunks, one
// client at a time, on each path: CPU and allocations per stream, the
// middle server's socket writes per stream, and the streams per second.
func BenchmarkStreamChunks(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			s := newScale(b, 2)
			defer s.close()
			s.run(b, 2, 4, n)
		})
	}
}

// BenchmarkConns makes non-streaming calls from 1, 16, 64 and 256
// concurrent clients on each path: CPU and allocations per call, calls per
// second, and the new upstream connections per second (0 once the pools
// are warm).
func BenchmarkConns(b *testing.B) {
	for _, n := range []int{1, 16, 64, 256} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			s := newScale(b, n)
			defer s.close()
			s.run(b, n, max(4, 512/n), 0)
		})
	}
}

// BenchmarkStreamRelay streams 1,000-chunk answers through the gateway
// only, one after the other, for profiling the relay of a stream
// (go test -run '^$' -bench StreamRelay -cpuprofile cpu.out ./gateway/):
// allocations per stream, and the process's CPU time per stream (upstream
// and client included).
func BenchmarkStreamRelay(b *testing.B) {
	s := newScale(b, 1)
	defer s.close()
	gw := s.paths[2]
	if err := s.call(gw, 1000); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu0 := processCPU()
	for b.Loop() {
		if err := s.call(gw, 1000); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
}
