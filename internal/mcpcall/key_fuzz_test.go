package mcpcall

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzCanonicalJSON: canonical JSON is valid JSON, a fixed point, and
// means the same value as its input.
func FuzzCanonicalJSON(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[1,2,{"d":null,"c":"x"}]}`, `{}`, ` { "prompt" : "hi\u00e9<>&" , "n": 1.50 } `, `[]`, `"s"`, `12e3`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := CanonicalJSON(in)
		if err != nil {
			return
		}
		if len(bytes.TrimSpace(in)) > 0 && !json.Valid(in) {
			t.Fatalf("accepted invalid JSON %q", in)
		}
		if !json.Valid(out) {
			t.Fatalf("canonical form of %q is not JSON: %q", in, out)
		}
		again, err := CanonicalJSON(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not a fixed point: %q -> %q -> %q (%v)", in, out, again, err)
		}
		if len(bytes.TrimSpace(in)) == 0 {
			return
		}
		var a, b any
		if json.Unmarshal(in, &a) == nil && json.Unmarshal(out, &b) == nil && !jsonDeepEqual(a, b) {
			t.Fatalf("meaning changed: %q -> %q", in, out)
		}
	})
}

func jsonDeepEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
