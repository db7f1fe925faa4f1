package telemetry

import (
	"testing"

	"github.com/llmguard/llmguard/provider"
)

func usage(in, out int) provider.Usage { return provider.Usage{InputTokens: in, OutputTokens: out} }

// histogram gathers family name's histograms, merged over their series.
func histogram(t *testing.T, m *Metrics, name string) (count uint64, sum float64) {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, s := range f.GetMetric() {
			h := s.GetHistogram()
			count += h.GetSampleCount()
			sum += h.GetSampleSum()
		}
	}
	return count, sum
}

func histCount(t *testing.T, m *Metrics, name string) uint64 { c, _ := histogram(t, m, name); return c }
func histSum(t *testing.T, m *Metrics, name string) float64  { _, s := histogram(t, m, name); return s }
