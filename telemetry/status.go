package telemetry

import (
	"github.com/llmguard/llmguard/resilience"
	"github.com/prometheus/client_golang/prometheus"
)

// stateValue is a breaker state as a gauge value.
func stateValue(s string) float64 {
	switch s {
	case "open":
		return 2
	case "half_open":
		return 1
	default:
		return 0
	}
}

// statusCollector reads the engine's target snapshot at each scrape.
type statusCollector struct {
	status func() []resilience.TargetStatus
	names  names
}

var (
	breakerDesc = prometheus.NewDesc("llmguard_breaker_state",
		"State of a target's circuit breaker: 0 closed, 1 half_open, 2 open.", []string{"target"}, nil)
	inFlightDesc = prometheus.NewDesc("llmguard_inflight",
		"Upstream attempts running now on a target (a stream until it is closed).", []string{"target"}, nil)
	queuedDesc = prometheus.NewDesc("llmguard_queued",
		"Calls waiting for a concurrency slot of a target.", []string{"target"}, nil)
)

func (c *statusCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- breakerDesc
	ch <- inFlightDesc
	ch <- queuedDesc
}

func (c *statusCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.status() {
		if t := c.names.target(s.Target); t == s.Target {
			ch <- prometheus.MustNewConstMetric(breakerDesc, prometheus.GaugeValue, stateValue(s.Breaker), t)
			ch <- prometheus.MustNewConstMetric(inFlightDesc, prometheus.GaugeValue, float64(s.InFlight), t)
			ch <- prometheus.MustNewConstMetric(queuedDesc, prometheus.GaugeValue, float64(s.Queued), t)
		}
	}
}
