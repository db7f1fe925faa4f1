package mcpcall_test

import (
	"context"
	"fmt"
	"time"

	"github.com/llmguard/llmguard/internal/mcpcall"
)

func ExampleGroup() {
	g := mcpcall.NewGroup[string, string](&mcpcall.GroupOptions[string]{TTL: time.Minute})
	runs := 0
	charge := func(ctx context.Context, emit func(string)) (string, error) {
		runs++
		return "charged 5 EUR", nil
	}
	for range 3 { // an agent that retries
		res, cached, _ := g.Do(context.Background(), "charge\x00order-42", nil, nil, charge)
		fmt.Println(res, cached)
	}
	fmt.Println("runs:", runs)
	// Output:
	// charged 5 EUR false
	// charged 5 EUR true
	// charged 5 EUR true
	// runs: 1
}
