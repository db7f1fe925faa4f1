package overhead

import (
	"runtime/metrics"
	"time"
)

// counters is what the process has spent: CPU time (user and system) and
// heap allocations.
type counters struct {
	cpu        time.Duration
	allocs     uint64
	allocBytes uint64
	peakRSS    uint64 // bytes, a child's, since its count last started (0: not known)
	rss        uint64 // bytes, a child's resident set as read (0: not known)
}

var allocSamples = []metrics.Sample{{Name: "/gc/heap/allocs:objects"}, {Name: "/gc/heap/allocs:bytes"}}

// read reads the process's counters now.
func read() counters {
	s := make([]metrics.Sample, len(allocSamples))
	copy(s, allocSamples)
	metrics.Read(s)
	c := counters{cpu: processCPU()}
	if s[0].Value.Kind() == metrics.KindUint64 {
		c.allocs = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		c.allocBytes = s[1].Value.Uint64()
	}
	return c
}

func (c counters) minus(o counters) counters {
	return counters{cpu: c.cpu - o.cpu, allocs: c.allocs - o.allocs, allocBytes: c.allocBytes - o.allocBytes, peakRSS: c.peakRSS, rss: c.rss}
}
