package batch_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/llmguard/llmguard/batch"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/resilience"
)

// echo is an engine that answers every prompt with its first line.
type echo struct{}

func (echo) Chat(_ context.Context, c *resilience.Call) (*resilience.Result, error) {
	first, _, _ := strings.Cut(c.Request.Messages[0].Content[0].Text, "\n")
	return &resilience.Result{Target: "echo/1", Attempts: 1,
		Response: &provider.Response{Text: "ok: " + first}}, nil
}

// A run over two items in llmguard's format, then a second run on the same
// results file, which has nothing left to do. Production code passes the
// engine from resilience.New and gateway.Codec{} as Config.Codec.
func Example() {
	dir, _ := os.MkdirTemp("", "batch")
	defer os.RemoveAll(dir)
	in, err := batch.Read("items.jsonl", []byte(`{"id": "a", "prompt": "first"}
{"id": "b", "prompt": "second"}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	out := filepath.Join(dir, "results.jsonl")
	for range 2 {
		r, _ := batch.New(echo{}, &batch.Config{Concurrency: 1})
		sum, err := r.Run(context.Background(), in, out)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("served %d, skipped %d, left %d\n", sum.Served, sum.Skipped, sum.Left())
	}
	b, _ := os.ReadFile(out)
	fmt.Print(strings.Count(string(b), `"status":"ok"`), " records\n")
	// Output:
	// served 2, skipped 0, left 0
	// served 0, skipped 2, left 0
	// 2 records
}
