package resilience

import (
	"io"
	"testing"

	"github.com/llmguard/llmguard/provider"
)

// Streamed reads a stream to its end and closes it: the text it carried.
// An error before io.EOF fails the test, with the text read until then.
// It is exported for the package's external tests too.
func Streamed(t *testing.T, s provider.Stream) string {
	t.Helper()
	defer s.Close()
	text, err := drainText(s)
	if err != io.EOF {
		t.Fatalf("after %q: %v", text, err)
	}
	return text
}
