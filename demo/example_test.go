package demo_test

import (
	"context"
	"fmt"

	"github.com/llmguard/llmguard/demo"
)

// Run plays the night and returns what each client got; numbers vary a
// little from run to run (real HTTP, real waits), so this example has no
// fixed output.
func ExampleRun() {
	s, err := demo.Run(context.Background(), &demo.Options{Requests: 20})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range []demo.Outcome{s.Llmguard, s.Naive, s.NoRetry} {
		fmt.Printf("%s: %d/%d served in %d attempts\n", o.Client, o.Served, s.Requests, o.MockAttempts)
	}
}
