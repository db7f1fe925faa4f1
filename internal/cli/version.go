package cli

import (
	"context"
	"fmt"

	"github.com/llmguard/llmguard/internal/version"
)

// runVersion prints the build's identity: module version, VCS revision
// (and whether the tree was modified), commit time, Go version, platform.
func runVersion(ctx context.Context, env *Env, args []string) int {
	if len(args) > 0 {
		fmt.Fprintf(env.Stderr, "llmguard version: unexpected argument %q\n", args[0])
		return 2
	}
	fmt.Fprintln(env.Stdout, version.Get())
	return 0
}
