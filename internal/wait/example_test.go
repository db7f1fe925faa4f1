package wait_test

import (
	"context"
	"fmt"
	"time"

	"github.com/llmguard/llmguard/internal/wait"
)

func ExampleFor() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	err := wait.For(ctx, time.Minute) // the deadline comes first
	fmt.Println(err)
	// Output: context deadline exceeded
}
