package overhead

import (
	"context"
	"fmt"
	"os"
	"testing"
)

// TestMain runs this test binary as a bench's child when SpawnSelf
// started it ("overhead.test bench child ARGS").
func TestMain(m *testing.M) {
	if os.Getenv(ChildEnv) != "" && len(os.Args) > 2 && os.Args[1] == "bench" && os.Args[2] == "child" {
		if err := ServeChild(context.Background(), os.Args[3:], os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
