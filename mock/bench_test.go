package mock

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkThroughput compares the mock with a bare net/http handler that
// drains the request and returns a fixed body of the same size, side by
// side over loopback with parallel clients. Compare the req/s metrics:
//
//	go test -run '^$' -bench Throughput -benchmem -count 3 ./mock
func BenchmarkThroughput(b *testing.B) {
	calls := map[string]call{
		"openai":    {api: dialectOpenAI, model: "gpt-4.1", text: "What is the capital of France?"},
		"anthropic": {api: dialectAnthropic, model: "claude-sonnet-4-5", text: "What is the capital of France?"},
		"gemini":    {api: dialectGemini, model: "gemini-2.5-flash", text: "What is the capital of France?"},
	}
	for _, name := range []string{"openai", "anthropic", "gemini"} {
		c := calls[name]
		srv := New(&Config{MaxRequests: 1000})
		bare := bareHandler(srv, c)
		b.Run(name+"/bare", func(b *testing.B) { runThroughput(b, bare, c) })
		b.Run(name+"/mock", func(b *testing.B) { runThroughput(b, srv, c) })
	}
	stream := call{api: dialectAnthropic, model: "claude-sonnet-4-5", text: "What is the capital of France?", stream: true}
	b.Run("anthropic-stream/mock", func(b *testing.B) { runThroughput(b, New(&Config{MaxRequests: 1000}), stream) })
}

// bareHandler drains the request and answers with the body srv gives c
// (the mock's own success body, rendered once): what a server that does
// nothing but answer would cost.
func bareHandler(srv *Server, c call) http.Handler {
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, c.request("http://mock"))
	fixed := rec.Body.Bytes()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(fixed)
	})
}

// loopbackClient is a client for b's parallel requests (256 idle
// connections), closed when b ends, with c's request to url and its body.
func loopbackClient(b *testing.B, c call, url string) (*http.Client, *http.Request, []byte) {
	tr := &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256}
	b.Cleanup(tr.CloseIdleConnections)
	proto := c.request(url)
	body, _ := io.ReadAll(proto.Body)
	return &http.Client{Transport: tr}, proto, body
}

func runThroughput(b *testing.B, h http.Handler, c call) {
	ts := httptest.NewServer(h)
	defer ts.Close()
	client, proto, body := loopbackClient(b, c, ts.URL)
	b.SetParallelism(4)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodPost, proto.URL.String(), bytes.NewReader(body))
			req.Header = proto.Header
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// BenchmarkServeHTTP measures the handler alone (no network: parse,
// choose, log, render) next to the bare handler in the same harness; the
// difference is what the mock adds to each request's server-side cost.
func BenchmarkServeHTTP(b *testing.B) {
	srv := New(&Config{MaxRequests: 1000})
	c := call{api: dialectOpenAI, model: "gpt-4.1", text: "What is the capital of France?"}
	proto := c.request("http://mock")
	body, _ := io.ReadAll(proto.Body)
	bare := bareHandler(srv, c)
	for _, h := range []struct {
		name string
		h    http.Handler
	}{{"bare", bare}, {"mock", srv}} {
		b.Run(h.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body))
				req.Header = proto.Header
				h.h.ServeHTTP(httptest.NewRecorder(), req)
			}
		})
	}
}

func BenchmarkParseOpenAI(b *testing.B) {
	proto := call{api: dialectOpenAI, model: "gpt-4.1", text: "What is the capital of France?"}.request("http://mock")
	body, _ := io.ReadAll(proto.Body)
	b.ReportAllocs()
	for b.Loop() {
		parseOpenAI(body)
	}
}

// BenchmarkSideBySide sends each parallel client's requests alternately to
// a bare handler (fixed body) and to the mock, so both see the same machine
// load, and reports each one's throughput and the ratio of their latencies
// (mock/bare; at most 1.2 means the mock is within 20% of the bare
// handler's throughput).
func BenchmarkSideBySide(b *testing.B) {
	c := call{api: dialectOpenAI, model: "gpt-4.1", text: "What is the capital of France?"}
	srv := New(&Config{MaxRequests: 1000})
	bareTS := httptest.NewServer(bareHandler(srv, c))
	defer bareTS.Close()
	mockTS := httptest.NewServer(srv)
	defer mockTS.Close()
	client, proto, body := loopbackClient(b, c, mockTS.URL)
	var bareNS, mockNS atomic.Int64
	send := func(url string) time.Duration {
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header = proto.Header
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			b.Error(err)
			return 0
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return time.Since(start)
	}
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for i := 0; pb.Next(); i++ {
			if i%2 == 0 { // alternate which goes first
				bareNS.Add(int64(send(bareTS.URL + "/v1/chat/completions")))
				mockNS.Add(int64(send(mockTS.URL + "/v1/chat/completions")))
			} else {
				mockNS.Add(int64(send(mockTS.URL + "/v1/chat/completions")))
				bareNS.Add(int64(send(bareTS.URL + "/v1/chat/completions")))
			}
		}
	})
	// Each of the par clients spends its time on both servers; a server's
	// throughput is the requests it served over the client time it took.
	n, par := float64(b.N), float64(4*runtime.GOMAXPROCS(0))
	b.ReportMetric(n*par/(float64(bareNS.Load())/1e9), "bare-req/s")
	b.ReportMetric(n*par/(float64(mockNS.Load())/1e9), "mock-req/s")
	b.ReportMetric(float64(mockNS.Load())/float64(bareNS.Load()), "mock/bare")
}
