package providertest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/llmguard/llmguard/internal/rawjson"
)

// FuzzScan checks an adapter's one-pass event scan against
// rawjson.Unmarshal into the same type T: where scan reads an event (ok),
// it reads what Unmarshal does, also on a scanner that read prev before
// (what it reuses). Shapes the scan leaves to Unmarshal (not ok) pass.
func FuzzScan[T any](f *testing.F, seeds []string, prev string, scan func([]byte) (*T, bool)) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want T
		werr := rawjson.Unmarshal(b, &want)
		for _, before := range []string{"", prev} {
			if before != "" {
				scan([]byte(before))
			}
			got, ok := scan(b)
			if !ok {
				continue
			}
			if werr != nil {
				t.Fatalf("scan read %q, Unmarshal: %v", b, werr)
			}
			if diff := cmp.Diff(want, *got, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("%s: read differently (-Unmarshal +scan):\n%s", b, diff)
			}
		}
	})
}
