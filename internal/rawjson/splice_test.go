package rawjson

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestSplice(t *testing.T) {
	tests := []struct {
		name, obj string
		fields    []Field
		want      string
	}{
		{"untouched", `{"a":1,"b":[1, 2]}`, nil, `{"a":1,"b":[1, 2]}`},
		{"set in place", `{"model":"x","b":2}`, []Field{{Key: "model", Value: []byte(`"y"`)}}, `{"model":"y","b":2}`},
		{"set appends", `{"b":2}`, []Field{{Key: "stream", Value: []byte(`true`)}}, `{"b":2,"stream":true}`},
		{"default keeps", `{"max_tokens":0}`, []Field{{Key: "max_tokens", Value: []byte(`9`), Mode: Default}}, `{"max_tokens":0}`},
		{"default adds", `{}`, []Field{{Key: "max_tokens", Value: []byte(`9`), Mode: Default}}, `{"max_tokens":9}`},
		{"replace only present", `{"a":1}`, []Field{{Key: "stream", Value: []byte(`false`), Mode: Replace}}, `{"a":1}`},
		{"replace present", `{"stream":true}`, []Field{{Key: "stream", Value: []byte(`false`), Mode: Replace}}, `{"stream":false}`},
		{"delete", ` { "a" : 1 , "fallbacks":["x"], "c":"\u00e9" } `, []Field{{Key: "fallbacks", Mode: Delete}}, `{"a":1,"c":"\u00e9"}`},
		{"first entry wins", `{"a":1}`, []Field{{Key: "a", Mode: Delete}, {Key: "a", Value: []byte(`2`)}}, `{}`},
		{"escaped key", `{"a\"b":1}`, []Field{{Key: "a\"b", Value: []byte(`2`)}}, `{"a\"b":2}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Splice(nil, []byte(tt.obj), tt.fields)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("Splice = %s, want %s", got, tt.want)
			}
			if !json.Valid(got) {
				t.Errorf("invalid JSON %s", got)
			}
		})
	}
	for _, bad := range []string{`null`, `[1]`, `{"a":}`, ``} {
		if _, err := Splice(nil, []byte(bad), nil); err == nil {
			t.Errorf("Splice(%q) = nil error", bad)
		}
	}
}

// FuzzSplice checks Splice against encoding/json: on any object it gives
// valid JSON whose decoded value is the object with the fields applied.
func FuzzSplice(f *testing.F) {
	for _, s := range []string{`{"model":"x","stream":true,"a":[1,{"b":null}]}`, `{}`, ` { "fallbacks" : ["a"] } `,
		`{"model":1,"model":2}`, `{"max_tokens":0,"\u00e9":"\n"}`} {
		f.Add([]byte(s))
	}
	fields := []Field{{Key: "model", Value: []byte(`"m"`)}, {Key: "stream", Value: []byte(`false`), Mode: Replace},
		{Key: "max_tokens", Value: []byte(`9`), Mode: Default}, {Key: "fallbacks", Mode: Delete}}
	f.Fuzz(func(t *testing.T, obj []byte) {
		var want map[string]json.RawMessage
		if json.Unmarshal(obj, &want) != nil || want == nil {
			return
		}
		got, err := Splice(nil, obj, fields)
		if err != nil {
			t.Fatalf("Splice(%s): %v", obj, err)
		}
		for _, f := range fields {
			_, has := want[f.Key]
			switch {
			case f.Mode == Delete:
				delete(want, f.Key)
			case f.Mode == Set, f.Mode == Replace && has, f.Mode == Default && !has:
				want[f.Key] = f.Value
			}
		}
		var gotMap map[string]json.RawMessage
		if err := json.Unmarshal(got, &gotMap); err != nil {
			t.Fatalf("Splice(%s) = %s: %v", obj, got, err)
		}
		norm := func(m map[string]json.RawMessage) map[string]any {
			out := map[string]any{}
			for k, v := range m {
				var x any
				_ = json.Unmarshal(v, &x)
				out[k] = x
			}
			return out
		}
		if a, b := norm(want), norm(gotMap); !reflect.DeepEqual(a, b) {
			t.Fatalf("Splice(%s) = %s, want %v", obj, got, a)
		}
	})
}

// TestSpliceAllocatesOnce: Splice grows dst once, however many fields it
// appends (a relayed stream's body adds stream and stream_options).
func TestSpliceAllocatesOnce(t *testing.T) {
	if raceOn {
		t.Skip("the race detector allocates")
	}
	obj := []byte(`{"model":"m","messages":[` + strings.Repeat(`{"role":"user","content":"long \"line\"\n"},`, 2000) + `{"role":"user","content":"x"}]}`)
	fields := []Field{{Key: "model", Value: []byte(`"gpt-4o-2024-08-06"`)}, {Key: "stream", Value: []byte("true")},
		{Key: "stream_options", Value: []byte(`{"include_usage":true}`)}, {Key: "max_completion_tokens", Mode: Delete},
		{Key: "max_tokens", Value: []byte("1024")}}
	if n := testing.AllocsPerRun(10, func() {
		if _, err := Splice(nil, obj, fields); err != nil {
			t.Fatal(err)
		}
	}); n != 1 {
		t.Errorf("Splice allocated %v times, want 1", n)
	}
}
