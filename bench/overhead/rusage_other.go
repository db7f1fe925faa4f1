//go:build !unix

package overhead

import "time"

// processCPU is unknown here (0): the report's CPU columns read 0.
func processCPU() time.Duration { return 0 }

// peakRSS is unknown here (0).
func peakRSS() uint64 { return 0 }

// residentRSS is unknown here (0).
func residentRSS() uint64 { return 0 }

// resetPeakRSS does nothing here.
func resetPeakRSS() {}
