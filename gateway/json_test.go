package gateway

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var scalarSeeds = []string{`0`, `-0`, `128`, `-7`, `007`, `+1`, `1.5`, `0.2`, `1e2`, `-1.25E-3`, `1e400`, `1e-400`,
	`123456789012345678`, `1234567890123456789`, `99999999999999999999`, `null`, `true`, `false`, `"5"`, `tru`, ``, `1 `, `[1]`, `.5`, `1.`}

// checkScalars: the unmarshal helpers give json.Unmarshal's value and error
// for v, starting from both a zero and a set destination.
func checkScalars(t *testing.T, v []byte) {
	t.Helper()
	errText := func(err error) string { return fmt.Sprint(err) }
	for _, start := range []int{0, 42} {
		got, want := start, start
		gerr, werr := unmarshalInt(v, &got), json.Unmarshal(v, &want)
		if got != want || errText(gerr) != errText(werr) {
			t.Errorf("int %q from %d: got %d, %v; json: %d, %v", v, start, got, gerr, want, werr)
		}
	}
	for _, start := range []*float64{nil, new(float64)} {
		var got, want *float64
		if start != nil {
			a, b := 0.5, 0.5
			got, want = &a, &b
		}
		gerr, werr := unmarshalFloat(v, &got), json.Unmarshal(v, &want)
		if !cmp.Equal(got, want) || errText(gerr) != errText(werr) {
			t.Errorf("float %q: got %v, %v; json: %v, %v", v, got, gerr, want, werr)
		}
	}
	for _, start := range []bool{false, true} {
		got, want := start, start
		gerr, werr := unmarshalBool(v, &got), json.Unmarshal(v, &want)
		if got != want || errText(gerr) != errText(werr) {
			t.Errorf("bool %q from %v: got %v, %v; json: %v, %v", v, start, got, gerr, want, werr)
		}
	}
}

func TestUnmarshalScalars(t *testing.T) {
	for _, s := range scalarSeeds {
		checkScalars(t, []byte(s))
	}
}

func FuzzUnmarshalScalars(f *testing.F) {
	for _, s := range scalarSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) { checkScalars(t, v) })
}

func TestKeyString(t *testing.T) {
	for _, k := range []string{"model", "messages", "tool_call_id", "unknown_key", ""} {
		if got := keyString([]byte(k)); got != k {
			t.Errorf("keyString(%q) = %q", k, got)
		}
	}
	b := []byte("messages")
	if n := testing.AllocsPerRun(100, func() { _ = keyString(b) }); n != 0 {
		t.Errorf("keyString of a known key allocates %v times", n)
	}
}
