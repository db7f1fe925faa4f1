package httpbody_test

import (
	"fmt"
	"strings"

	"github.com/llmguard/llmguard/internal/httpbody"
)

func Example() {
	body := `{"model":"m"}`
	b, err := httpbody.Read(strings.NewReader(body), int64(len(body)), 1<<20)
	fmt.Println(string(b), len(b), cap(b), err)
	// Output: {"model":"m"} 13 14 <nil>
}
