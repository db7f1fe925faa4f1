//go:build unix

package overhead

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS is the process's peak resident set size in bytes since it
// started or since resetPeakRSS (0: unknown): Linux's VmHWM, else
// getrusage's (which no reset moves).
func peakRSS() uint64 {
	if n := procStatus("VmHWM:"); n > 0 {
		return n
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return uint64(ru.Maxrss) // bytes there, KiB elsewhere
	}
	return uint64(ru.Maxrss) << 10
}

// residentRSS is the process's resident set size in bytes now (0:
// unknown): Linux's VmRSS.
func residentRSS() uint64 { return procStatus("VmRSS:") }

// procStatus is the size in bytes that Linux's /proc/self/status gives on
// the line of key (0: none).
func procStatus(key string) uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, key); ok {
			if kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64); err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// resetPeakRSS starts the peak resident set count again from the current
// resident set, where Linux allows it.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }
