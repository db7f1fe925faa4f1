package gateway

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/llmguard/llmguard/internal/pipenet"
	"github.com/llmguard/llmguard/mock"
	"github.com/llmguard/llmguard/resilience"
	dto "github.com/prometheus/client_model/go"

	"github.com/llmguard/llmguard/telemetry"
)

const metricsConfig = mockProviders + `routes:
  default:
    targets: [openai/gpt-4o]
  overloaded:
    targets: ["anthropic/claude-sonnet-4-5+fault=529:9", openai/gpt-4o]
    retry: {max_attempts: 2}
  retry-after:
    targets: ["openai/gpt-4o+fault=429:3,200"]
`

// metricsStack is the gateway with metrics fed by its engine's events and
// its own request records, on the mock over pipenet (inside a synctest
// bubble, backoff takes virtual time).
func metricsStack(t *testing.T, keys ...string) (*pipenet.Server, *telemetry.Metrics) {
	t.Helper()
	ms := pipenet.NewServer(mock.New(nil))
	t.Cleanup(ms.Close)
	var eng *resilience.Engine
	m := telemetry.New(&telemetry.Options{Routes: map[string][]string{
		"default":     {"openai/gpt-4o"},
		"overloaded":  {"anthropic/claude-sonnet-4-5+fault=529:9", "openai/gpt-4o"},
		"retry-after": {"openai/gpt-4o+fault=429:3,200"},
	}, Status: func() []resilience.TargetStatus { return eng.Status() }})
	srv, eng := newGateway(t, strings.ReplaceAll(metricsConfig, "MOCK", ms.URL), ms.Client(), m.Event,
		&Options{Metrics: m, Keys: keys})
	gw := pipenet.NewServer(srv.Handler())
	t.Cleanup(gw.Close)
	return gw, m
}

func doPost(t *testing.T, gw *pipenet.Server, path, body string, hdr ...string) int {
	t.Helper()
	status, _ := postTo(t, gw, path, body, append([]string{"Content-Type", "application/json"}, hdr...)...)
	return status
}

// getWithKey GETs path from gw, with key as a bearer token unless it is
// "", and returns the status.
func getWithKey(t *testing.T, gw *pipenet.Server, path, key string) int {
	t.Helper()
	hdr := []string{}
	if key != "" {
		hdr = []string{"Authorization", "Bearer " + key}
	}
	status, _ := send(t, gw, http.MethodGet, path, "", hdr...)
	return status
}

// family finds a gathered metric family by name.
func family(t *testing.T, m *telemetry.Metrics, name string) *dto.MetricFamily {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == name {
			return f
		}
	}
	return nil
}

// value is the counter, gauge or histogram count of the series of family
// name whose labels include want ("k=v" pairs); -1 when there is none.
func value(t *testing.T, m *telemetry.Metrics, name string, want ...string) float64 {
	t.Helper()
	f := family(t, m, name)
	if f == nil {
		return -1
	}
next:
	for _, s := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range s.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for _, w := range want {
			k, v, _ := strings.Cut(w, "=")
			if have[k] != v {
				continue next
			}
		}
		switch {
		case s.Counter != nil:
			return s.Counter.GetValue()
		case s.Gauge != nil:
			return s.Gauge.GetValue()
		case s.Histogram != nil:
			return float64(s.Histogram.GetSampleCount())
		}
	}
	return -1
}

// TestMetrics: a call that retried, fell back and succeeded, one that
// waited on a retry-after hint, a stream and a request for a model a
// client invents show in /metrics with the families' labels, and the
// invented name never becomes a label value.
func TestMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gw, m := metricsStack(t)
		if code := doPost(t, gw, "/v1/chat/completions", oaBody("overloaded", false, "")); code != 200 {
			t.Fatalf("overloaded: status %d", code)
		}
		if code := doPost(t, gw, "/v1/chat/completions", oaBody("retry-after", false, "")); code != 200 {
			t.Fatalf("retry-after: status %d", code)
		}
		if code := doPost(t, gw, "/v1/messages", anBody("default", true, "")); code != 200 {
			t.Fatalf("stream: status %d", code)
		}
		// A configured provider serves any model it is asked for: the
		// call succeeds, and counts under "other".
		if code := doPost(t, gw, "/v1/chat/completions", oaBody("openai/invented-model-x", false, "")); code != 200 {
			t.Fatalf("invented model: status %d", code)
		}

		const ant = "anthropic/claude-sonnet-4-5+fault=529:9"
		for _, c := range []struct {
			name   string
			labels []string
			min    float64
		}{
			{"llmguard_requests_total", []string{"route=overloaded", "target=openai/gpt-4o", "dialect=openai", "outcome=success"}, 1},
			{"llmguard_requests_total", []string{"route=default", "target=openai/gpt-4o", "dialect=anthropic", "outcome=success"}, 1},
			{"llmguard_requests_total", []string{"route=other", "target=other", "dialect=openai", "outcome=success"}, 1},
			{"llmguard_attempts_total", []string{"target=" + ant, "error_type=overloaded", "fault_domain=provider"}, 2},
			{"llmguard_attempts_total", []string{"target=openai/gpt-4o", "error_type=", "fault_domain="}, 2},
			{"llmguard_retries_total", []string{"target=" + ant, "error_type=overloaded"}, 1},
			{"llmguard_retry_wait_seconds_total", []string{"target=openai/gpt-4o+fault=429:3,200", "source=hint"}, 3},
			{"llmguard_fallbacks_total", []string{"from=" + ant, "to=openai/gpt-4o", "reason=overloaded"}, 1},
			{"llmguard_request_duration_seconds", []string{"route=retry-after", "dialect=openai", "outcome=success"}, 1},
			{"gen_ai_client_token_usage", []string{"gen_ai_provider_name=openai", "gen_ai_request_model=gpt-4o", "gen_ai_token_type=output"}, 2},
			{"gen_ai_client_operation_time_to_first_chunk_seconds", []string{"gen_ai_provider_name=openai", "gen_ai_request_model=gpt-4o"}, 1},
			{"gen_ai_client_operation_time_per_output_chunk_seconds", []string{"gen_ai_provider_name=openai"}, 1},
			{"gen_ai_client_operation_duration_seconds", []string{"gen_ai_provider_name=anthropic", "gen_ai_request_model=claude-sonnet-4-5+fault=529:9", "error_type=overloaded"}, 2},
			{"gen_ai_client_operation_duration_seconds", []string{"gen_ai_provider_name=openai", "gen_ai_request_model=gpt-4o", "error_type="}, 2},
			{"llmguard_inflight", []string{"target=openai/gpt-4o"}, 0},
			{"llmguard_breaker_state", []string{"target=openai/gpt-4o"}, 0},
		} {
			if got := value(t, m, c.name, c.labels...); got < c.min {
				t.Errorf("%s%v = %v, want >= %v", c.name, c.labels, got, c.min)
			}
		}
		if got := value(t, m, "llmguard_cost_usd_total", "target=openai/gpt-4o"); got <= 0 {
			t.Errorf("llmguard_cost_usd_total{target=openai/gpt-4o} = %v, want > 0", got)
		}

		res := pipenet.Do(t, gw.Client(), http.MethodGet, gw.URL+"/metrics", "")
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !strings.Contains(string(b), "# TYPE llmguard_requests_total counter") {
			t.Fatalf("/metrics: %d\n%s", res.StatusCode, b)
		}
		if strings.Contains(string(b), "invented") {
			t.Errorf("a model name the client invented became a label value:\n%s", b)
		}
	})
}

// TestMetricsNeedKey: with gateway keys, /metrics (like /status) needs one.
func TestMetricsNeedKey(t *testing.T) {
	gw, _ := metricsStack(t, "gw-key-1")
	for _, c := range []struct {
		key  string
		want int
	}{{"", 401}, {"wrong", 401}, {"gw-key-1", 200}} {
		if got := getWithKey(t, gw, "/metrics", c.key); got != c.want {
			t.Errorf("key %q: status %d, want %d", c.key, got, c.want)
		}
	}
}

// BenchmarkGatewayMetrics interleaves calls to the gateway without and
// with metrics (the engine's events and the request records counted) on
// one mock, and reports each one's p50 and what metrics add to it.
//
//	go test -run '^$' -bench 'GatewayMetrics' -benchtime 5000x ./gateway/
func BenchmarkGatewayMetrics(b *testing.B) {
	bs := newBench(b)
	defer bs.close()
	m := telemetry.New(&telemetry.Options{Routes: map[string][]string{"default": {"openai/gpt-4o"}}})
	mock := strings.TrimSuffix(bs.direct, "/v1/chat/completions")
	srv, _ := newGateway(b, "providers:\n  openai: {base_url: "+mock+"/v1, api_key: bench-key}\n"+
		"routes:\n  default:\n    targets: [openai/gpt-4o]\n", nil, m.Event, &Options{Metrics: m})
	ms := httptest.NewServer(srv.Handler())
	defer ms.Close()
	with := ms.URL + "/v1/chat/completions"
	lat := interleave(b, []string{bs.gateway, with}, func(p string) {
		bs.gateway = p // call names the route "default" on bs.gateway
		bs.call(b, p)
	})
	for _, q := range quantiles {
		off, on := percentile(lat[0], q.p), percentile(lat[1], q.p)
		b.ReportMetric(micros(off), "without-"+q.name+"-µs")
		b.ReportMetric(micros(on-off), "metrics-added-"+q.name+"-µs")
	}
	b.ReportMetric(0, "ns/op")
}

// TestUINeedsKeyForData: with gateway keys the dashboard's page loads
// without one, its live data needs one.
func TestUINeedsKeyForData(t *testing.T) {
	ms := pipenet.NewServer(mock.New(nil))
	t.Cleanup(ms.Close)
	ui := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(r.URL.Path)) })
	srv, _ := newGateway(t, strings.ReplaceAll(metricsConfig, "MOCK", ms.URL), ms.Client(), nil,
		&Options{UI: ui, Keys: []string{"gw-key-2"}})
	gw := pipenet.NewServer(srv.Handler())
	t.Cleanup(gw.Close)
	for _, c := range []struct {
		path, key string
		want      int
	}{{"/ui/", "", 200}, {"/ui/app.js", "", 200}, {"/ui/events", "", 401}, {"/ui/snapshot", "", 401}, {"/ui/events", "gw-key-2", 200}} {
		if got := getWithKey(t, gw, c.path, c.key); got != c.want {
			t.Errorf("%s (key %q): %d, want %d", c.path, c.key, got, c.want)
		}
	}
}
