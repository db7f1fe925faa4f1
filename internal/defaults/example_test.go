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

func ExampleCopy() {
	type config struct{ Retries int }
	var none *config
	given := &config{Retries: 2}
	d := defaults.Copy(given)
	d.Retries++ // a copy: given is left as it was
	fmt.Println(defaults.Copy(none).Retries, given.Retries, d.Retries)
	// Output: 0 2 3
}
