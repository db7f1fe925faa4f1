package rawjson

import (
	"encoding/json"
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
