package batch

import (
	"path/filepath"
	"testing"
)

func TestRunHealthy(t *testing.T) {
	s := newStack(t, nil, nil)
	in := writeLines(t, "items.jsonl", ownItems(20))
	out := filepath.Join(t.TempDir(), "results.jsonl")
	sum := run(t, s.eng, in, out, &Config{Concurrency: 4})
	if sum.Served != 20 || sum.Failed != 0 || sum.Left() != 0 || sum.Stopped != "" {
		t.Fatalf("summary: %+v", sum)
	}
	recs := readResults(t, out)
	ids := idsOf(recs)
	if len(recs) != 20 || len(ids) != 20 {
		t.Fatalf("%d records, %d ids", len(recs), len(ids))
	}
	for _, r := range recs {
		if r["status"] != "ok" || r["answer"] == "" || r["target"] != "anthropic/claude-sonnet-4-5" {
			t.Fatalf("record %v", r)
		}
	}
	// A second run has nothing to do.
	sum = run(t, s.eng, in, out, nil)
	if sum.Skipped != 20 || sum.Served != 0 || len(readResults(t, out)) != 20 {
		t.Fatalf("rerun: %+v", sum)
	}
}
