package overhead

import (
	"bufio"
	"os"
	"runtime"
	"strings"
)

// Machine is what the numbers were measured on.
type Machine struct {
	// Cores is the number of logical CPUs; GOMAXPROCS how many ran Go code.
	Cores, GOMAXPROCS int
	// CPU is the processor's model name from /proc/cpuinfo ("" if unknown).
	CPU string
	// Go is the Go version and platform the bench was built with.
	Go string
	// Load is /proc/loadavg's 1-, 5- and 15-minute averages at the start
	// ("" if unknown): other work on the machine makes the numbers noisier.
	Load string
}

// thisMachine describes the machine the process runs on.
func thisMachine() Machine {
	m := Machine{Cores: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		Go: runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			m.Load = strings.Join(f[:3], " ")
		}
	}
	return m
}
