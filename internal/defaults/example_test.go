package defaults_test

import (
	"fmt"
	"time"

	"github.com/llmguard/llmguard/internal/defaults"
)

func ExamplePositive() {
	timeout, retries := time.Duration(0), -1
	defaults.Positive(&timeout, 30*time.Second)
	defaults.Positive(&retries, 3)
	concurrency := 4
	defaults.Positive(&concurrency, 8) // set: kept
	fmt.Println(timeout, retries, concurrency)
	// Output: 30s 3 4
}
