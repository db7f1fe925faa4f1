package rawjson

import (
	"bytes"
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
			ms, err := Members([]byte(tt.obj), nil)
			if err != nil {
				t.Fatal(err)
			}
			parts := string(bytes.Join(SpliceParts([]byte(tt.obj), ms, tt.fields), nil))
			if compact := strings.Join(strings.Fields(parts), ""); compact != tt.want && parts != tt.want {
				t.Errorf("SpliceParts = %s, want %s", parts, tt.want)
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
		ms, err := Members(obj, nil)
		if err != nil {
			t.Fatalf("Members(%s): %v", obj, err)
		}
		parts := bytes.Join(SpliceParts(obj, ms, fields), nil)
		if !json.Valid(parts) {
			t.Fatalf("SpliceParts(%s) = %s: invalid", obj, parts)
		}
		var fromParts, fromSplice any
		_ = json.Unmarshal(parts, &fromParts)
		_ = json.Unmarshal(got, &fromSplice)
		if !reflect.DeepEqual(fromParts, fromSplice) {
			t.Fatalf("SpliceParts(%s) = %s, Splice %s", obj, parts, got)
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

// TestSpliceParts: the parts of a relayed body are slices of the client's
// buffer around the fields that change, and the kept runs keep their bytes
// (whitespace included).
func TestSpliceParts(t *testing.T) {
	obj := []byte(`{"model":"x", "messages":[{"role":"user","content":"hi \"there\""}], "fallbacks":["a"],"max_tokens":5}`)
	ms, err := Members(obj, nil)
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, len(ms))
	for i, m := range ms {
		keys[i] = m.Key + "=" + string(obj[m.Value:m.End])
	}
	if got := strings.Join(keys, " "); got != `model="x" messages=[{"role":"user","content":"hi \"there\""}] fallbacks=["a"] max_tokens=5` {
		t.Errorf("Members = %s", got)
	}
	parts := SpliceParts(obj, ms, []Field{{Key: "model", Value: []byte(`"gpt"`)}, {Key: "fallbacks", Mode: Delete},
		{Key: "stream", Value: []byte(`true`)}})
	got := string(bytes.Join(parts, nil))
	want := `{"model":"gpt",` + `"messages":[{"role":"user","content":"hi \"there\""}],"max_tokens":5,"stream":true}`
	if got != want {
		t.Errorf("SpliceParts = %s, want %s", got, want)
	}
	shared := false
	for _, p := range parts {
		shared = shared || len(p) > 40 && &p[0] == &obj[bytes.Index(obj, []byte(`"messages"`))]
	}
	if !shared {
		t.Errorf("the messages were copied, not sliced: %q", parts)
	}
	for _, bad := range []string{`null`, `[1]`, `{"a":}`, ``, `{"a":1} x`} {
		if _, err := Members([]byte(bad), nil); err == nil {
			t.Errorf("Members(%q) = nil error", bad)
		}
	}
}
