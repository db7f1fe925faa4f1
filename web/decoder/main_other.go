//go:build !(js && wasm)

package main

import (
	"fmt"
	"os"
)

// main says how to build the decoder: it only runs in a browser.
func main() {
	fmt.Fprintln(os.Stderr, "decoder: build it for the browser with go generate ./web (GOOS=js GOARCH=wasm)")
	os.Exit(2)
}
