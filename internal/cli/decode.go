package cli

import (
	"context"
	"fmt"
)

// runDecode is implemented with the classifier (issue 2).
func runDecode(ctx context.Context, env *Env, args []string) int {
	fmt.Fprintln(env.Stderr, "llmguard decode: not built yet")
	return 2
}
