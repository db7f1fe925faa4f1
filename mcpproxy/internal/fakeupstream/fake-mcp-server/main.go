// Command fake-mcp-server is fakeupstream's server on stdio, for the tests
// that start it as a real process (FAKE_UPSTREAM_LOG: the execution log).
// With --broken it exits at once with a Python traceback on stderr.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/llmguard/llmguard/mcpproxy/internal/fakeupstream"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "--broken" {
		fmt.Fprint(os.Stderr, "Traceback (most recent call last):\n  File \"server.py\", line 3, in <module>\n    import requests\nModuleNotFoundError: No module named 'requests'\n")
		os.Exit(1)
	}
	f := fakeupstream.New(&fakeupstream.Options{Log: os.Getenv("FAKE_UPSTREAM_LOG")})
	if err := f.Server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "fake-mcp-server:", err)
		os.Exit(1)
	}
}
