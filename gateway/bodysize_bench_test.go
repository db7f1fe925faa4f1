package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/llmguard/llmguard/provider"
)

// BenchmarkBodySize is the cost of a request as its body grows (issue 19
// item 1): an agent's conversation of 1, 32, 128 and 512 KB (tool
// definitions, tool calls and results, code with newlines and quotes)
// posted one at a time to a trivial upstream directly, through a plain
// httputil.ReverseProxy and through the gateway, in the same run.
//
//	go test -run '^$' -bench 'BodySize' -benchtime 100x ./gateway/
//
// Sub-benchmarks are BodySize/<client dialect>-to-<target dialect>/<size>:
// openai-to-openai and anthropic-to-anthropic are relayed (same dialect),
// openai-to-anthropic and anthropic-to-openai are translated. Each path
// runs b.N requests in turn after a GC, and reports per request the
// process CPU time (getrusage: user+system, client and upstream included)
// and the bytes allocated (the heap's cumulative allocations); the
// proxy-/gateway- figures are what the path costs over the direct call,
// and gateway/proxy-cpu and gateway-B/body the ratios of the issue's
// targets.
func BenchmarkBodySize(b *testing.B) {
	for _, d := range []struct{ client, target string }{
		{DialectOpenAI, DialectOpenAI}, {DialectAnthropic, DialectAnthropic},
		{DialectOpenAI, DialectAnthropic}, {DialectAnthropic, DialectOpenAI},
	} {
		b.Run(d.client+"-to-"+d.target, func(b *testing.B) {
			bs := newBodyBench(b)
			defer bs.close()
			for _, kb := range []int{1, 32, 128, 512} {
				body := agentBody(d.client, d.target, kb<<10)
				b.Run(fmt.Sprintf("%dKB", kb), func(b *testing.B) { bs.run(b, d.client, body) })
			}
		})
	}
}

// bodyBench is an upstream that reads each request whole and answers a
// fixed small completion in the dialect of its path, and the proxy and
// gateway in front of it.
type bodyBench struct {
	direct, proxy, gateway string // base URLs
	client                 *http.Client
	closers                []func()
}

func (bs *bodyBench) close() {
	for _, c := range bs.closers {
		c()
	}
}

const (
	benchOpenAIAnswer    = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"Done."},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}`
	benchAnthropicAnswer = `{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Done."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":9,"output_tokens":2}}`
)

func newBodyBench(tb testing.TB) *bodyBench {
	tb.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/messages") {
			io.WriteString(w, benchAnthropicAnswer)
			return
		}
		io.WriteString(w, benchOpenAIAnswer)
	}))
	u, _ := url.Parse(up.URL)
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.Transport = provider.NewHTTPClient(nil).Transport
	rp.ErrorLog = slog.NewLogLogger(slog.DiscardHandler, slog.LevelError)
	ps := httptest.NewServer(rp)
	gs := httptest.NewServer(twoDialects(tb, up.URL).Handler())
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4, IdleConnTimeout: time.Minute}}
	return &bodyBench{direct: up.URL, proxy: ps.URL, gateway: gs.URL, client: client,
		closers: []func(){gs.Close, ps.Close, up.Close, client.CloseIdleConnections}}
}

// twoDialects is a gateway in front of upstream as OpenAI (base URL
// upstream/v1) and Anthropic, with a route to each: to-openai and
// to-anthropic.
func twoDialects(tb testing.TB, upstream string) *Server {
	tb.Helper()
	srv, _ := newGateway(tb, "providers:\n"+
		"  openai: {base_url: "+upstream+"/v1, api_key: bench-key}\n"+
		"  anthropic: {base_url: "+upstream+", api_key: bench-key}\n"+
		"routes:\n"+
		"  to-openai:\n    targets: [openai/gpt-4o]\n"+
		"  to-anthropic:\n    targets: [anthropic/claude-sonnet-4-5]\n", nil, nil, nil)
	return srv
}

// post sends body to base's endpoint of dialect and reads the answer.
func (bs *bodyBench) post(tb testing.TB, base, dialect string, body []byte) {
	path := "/v1/chat/completions"
	if dialect == DialectAnthropic {
		path = "/v1/messages"
	}
	postJSON(tb, bs.client, base+path, bytes.NewReader(body))
}

// pathCost is what n requests on one path cost the process.
type pathCost struct{ cpu, alloc float64 } // µs and bytes per request

// add adds c, measured over n of total requests, to p.
func (p *pathCost) add(c pathCost, n, total int) {
	p.cpu += c.cpu * float64(n) / float64(total)
	p.alloc += c.alloc * float64(n) / float64(total)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (bs *bodyBench) measure(tb testing.TB, base, dialect string, body []byte, n int) pathCost {
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	c0 := processCPU()
	for range n {
		bs.post(tb, base, dialect, body)
	}
	c1 := processCPU()
	runtime.ReadMemStats(&m1)
	return pathCost{cpu: float64(c1-c0) / float64(time.Microsecond) / float64(n),
		alloc: float64(m1.TotalAlloc-m0.TotalAlloc) / float64(n)}
}

func (bs *bodyBench) run(b *testing.B, dialect string, body []byte) {
	for _, base := range []string{bs.direct, bs.proxy, bs.gateway} { // warm the connections
		bs.post(b, base, dialect, body)
	}
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	// Five rounds of the three paths in turn, so that they share the
	// machine's varying state.
	var direct, proxy, gw pathCost
	const rounds = 5
	for r := range rounds {
		n := b.N/rounds + btoi(r < b.N%rounds)
		if n == 0 {
			continue
		}
		direct.add(bs.measure(b, bs.direct, dialect, body, n), n, b.N)
		proxy.add(bs.measure(b, bs.proxy, dialect, body, n), n, b.N)
		gw.add(bs.measure(b, bs.gateway, dialect, body, n), n, b.N)
	}
	b.StopTimer()
	proxy.cpu, proxy.alloc = proxy.cpu-direct.cpu, proxy.alloc-direct.alloc
	gw.cpu, gw.alloc = gw.cpu-direct.cpu, gw.alloc-direct.alloc
	b.ReportMetric(direct.cpu, "direct-cpu-µs/req")
	b.ReportMetric(proxy.cpu, "proxy-cpu-µs/req")
	b.ReportMetric(gw.cpu, "gateway-cpu-µs/req")
	b.ReportMetric(gw.cpu/proxy.cpu, "gateway/proxy-cpu")
	b.ReportMetric(proxy.alloc, "proxy-B/req")
	b.ReportMetric(gw.alloc, "gateway-B/req")
	b.ReportMetric(gw.alloc/float64(len(body)), "gateway-B/body")
	b.ReportMetric(0, "ns/op") // per-op time mixes three paths; the metrics above are the result
}

// processCPU is the process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// agentBody is a request of about size bytes in dialect for the route to
// target: a system prompt, three tools, then turns of a coding agent's
// conversation (a question, a tool call, the file it read, an answer)
// until the body is size bytes. Deterministic.
func agentBody(dialect, target string, size int) []byte {
	model := "to-" + target
	code := "package main\n\nimport \"fmt\"\n\n// main says \"hello\" — in a tab:\tdone.\nfunc main() {\n\tfmt.Println(\"héllo, world\")\n}\n"
	tools := []map[string]any{}
	for _, name := range []string{"read_file", "write_file", "run"} {
		schema := map[string]any{"type": "object", "properties": map[string]any{
			"path": map[string]any{"type": "string", "description": "The file's path, relative to the project."}},
			"required": []string{"path"}}
		if dialect == DialectAnthropic {
			tools = append(tools, map[string]any{"name": name, "description": "Does " + name + ".\nUse it \"carefully\".", "input_schema": schema})
		} else {
			tools = append(tools, map[string]any{"type": "function", "function": map[string]any{
				"name": name, "description": "Does " + name + ".\nUse it \"carefully\".", "parameters": schema}})
		}
	}
	system := "You are a coding agent.\nAnswer \"tersely\".\n"
	var msgs []map[string]any
	if dialect == DialectOpenAI {
		msgs = append(msgs, map[string]any{"role": "system", "content": system})
	}
	req := map[string]any{"model": model, "max_tokens": 1024, "tools": tools}
	if dialect == DialectAnthropic {
		req["system"] = []map[string]any{{"type": "text", "text": system}}
	}
	for i := 0; ; i++ {
		req["messages"] = msgs
		raw, err := json.Marshal(req)
		if err != nil {
			panic(err)
		}
		if i > 0 && len(raw) >= size-200 || i > 10000 {
			return raw
		}
		id := fmt.Sprintf("call_%d", i)
		file := strings.Repeat(code, 1+min(i, 24)) // the files grow, as files do
		if rest := size - len(raw) - 400; len(file) > rest {
			file = file[:max(rest, 16)]
		}
		question := fmt.Sprintf("Step %d: read main.go and fix the \"hello\" line.\nThen run it.", i)
		args := `{"path":"main.go"}`
		if dialect == DialectAnthropic {
			msgs = append(msgs,
				map[string]any{"role": "user", "content": []map[string]any{{"type": "text", "text": question}}},
				map[string]any{"role": "assistant", "content": []map[string]any{{"type": "text", "text": "Reading it."},
					{"type": "tool_use", "id": "toolu_" + id, "name": "read_file", "input": json.RawMessage(args)}}},
				map[string]any{"role": "user", "content": []map[string]any{{"type": "tool_result", "tool_use_id": "toolu_" + id, "content": file}}},
				map[string]any{"role": "assistant", "content": []map[string]any{{"type": "text", "text": "Fixed:\n\n```go\n" + code + "```"}}})
			continue
		}
		msgs = append(msgs,
			map[string]any{"role": "user", "content": question},
			map[string]any{"role": "assistant", "content": "Reading it.", "tool_calls": []map[string]any{{"id": id, "type": "function",
				"function": map[string]any{"name": "read_file", "arguments": args}}}},
			map[string]any{"role": "tool", "tool_call_id": id, "content": file},
			map[string]any{"role": "assistant", "content": "Fixed:\n\n```go\n" + code + "```"})
	}
}

// BenchmarkBurstMemory is the process's resident memory around a burst of
// 512 KB requests (issue 19 item 4): 16 clients send 8 each through the
// gateway (OpenAI to an OpenAI target); it reports the resident set before,
// at the burst's end, and 6 s later (the server returns free memory
// reclaimAfter after the last large body). Run it alone, once:
//
//	go test -run '^$' -bench 'BurstMemory' -benchtime 1x ./gateway/
func BenchmarkBurstMemory(b *testing.B) {
	if residentBytes() == 0 {
		b.Skip("no /proc/self/statm")
	}
	bs := newBodyBench(b)
	defer bs.close()
	body := agentBody(DialectOpenAI, DialectOpenAI, 512<<10)
	bs.post(b, bs.gateway, DialectOpenAI, body)
	debug.FreeOSMemory()
	before := residentBytes()
	b.ResetTimer()
	for range b.N {
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				for range 8 {
					bs.post(b, bs.gateway, DialectOpenAI, body)
				}
			})
		}
		wg.Wait()
	}
	b.StopTimer()
	end := residentBytes()
	time.Sleep(6 * time.Second)
	later := residentBytes()
	mib := func(n uint64) float64 { return float64(n) / (1 << 20) }
	b.ReportMetric(mib(before), "rss-before-MiB")
	b.ReportMetric(mib(end), "rss-burst-end-MiB")
	b.ReportMetric(mib(later), "rss-6s-later-MiB")
	b.ReportMetric(0, "ns/op")
}

// residentBytes is the process's resident set size (0 when unknown).
func residentBytes() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.ParseUint(f[1], 10, 64)
	return n * uint64(os.Getpagesize())
}
