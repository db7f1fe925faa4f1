// Command fake-mcp-server is fakeupstream's server as a real process, for
// the tests that start it: on stdio by default, on Streamable HTTP with
// --http ADDR (it prints "listening on http://ADDR/mcp" on stdout). The
// execution log is FAKE_UPSTREAM_LOG. With --broken it exits at once with a
// Python traceback on stderr, as a server with a missing module does.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/llmguard/llmguard/mcpproxy/internal/fakeupstream"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	broken := flag.Bool("broken", false, "exit at once with a Python traceback on stderr")
	addr := flag.String("http", "", "serve Streamable HTTP on `addr` (127.0.0.1:0: a free port) instead of stdio")
	flag.Parse()
	if *broken {
		fmt.Fprint(os.Stderr, "Traceback (most recent call last):\n  File \"server.py\", line 3, in <module>\n    import requests\nModuleNotFoundError: No module named 'requests'\n")
		os.Exit(1)
	}
	if *addr == "" {
		f := fakeupstream.New(&fakeupstream.Options{Log: os.Getenv("FAKE_UPSTREAM_LOG")})
		if err := f.Server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "fake-mcp-server:", err)
			os.Exit(1)
		}
		return
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake-mcp-server:", err)
		os.Exit(1)
	}
	// One fake for every session: a crash ends the process.
	f := fakeupstream.New(&fakeupstream.Options{Log: os.Getenv("FAKE_UPSTREAM_LOG")})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return f.Server }, nil)
	fmt.Printf("listening on http://%s/mcp\n", ln.Addr())
	if err := http.Serve(ln, h); err != nil {
		fmt.Fprintln(os.Stderr, "fake-mcp-server:", err)
		os.Exit(1)
	}
}
