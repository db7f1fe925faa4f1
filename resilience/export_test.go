package resilience

import (
	"io"
	"strings"
	"testing"

	"github.com/llmguard/llmguard/provider"
)

// Streamed reads a stream to its end and closes it: the text it carried.
// An error before io.EOF fails the test, with the text read until then.
// It is exported for the package's external tests too.
func Streamed(t *testing.T, s provider.Stream) string {
	t.Helper()
	defer s.Close()
	var b strings.Builder
	for {
		c, err := s.Recv()
		if err == io.EOF {
			return b.String()
		}
		if err != nil {
			t.Fatalf("after %q: %v", b.String(), err)
		}
		b.WriteString(c.Text)
	}
}
