package rawjson

import (
	stdjson "encoding/json"
	"reflect"
	"testing"
)

// request is the shape of the request fields the adapters and the gateway
// decode: scalars, pointers, raw values, slices and maps.
type request struct {
	Model       string                        `json:"model"`
	Stream      bool                          `json:"stream"`
	MaxTokens   int                           `json:"max_tokens"`
	Temperature *float64                      `json:"temperature"`
	Stop        []string                      `json:"stop"`
	Metadata    map[string]string             `json:"metadata"`
	Extra       map[string]stdjson.RawMessage `json:"extra"`
	Messages    []struct {
		Role    string             `json:"role"`
		Content stdjson.RawMessage `json:"content"`
	} `json:"messages"`
	Any any `json:"any"`
}

// FuzzUnmarshal checks Unmarshal against encoding/json: the same value, or
// the same error.
func FuzzUnmarshal(f *testing.F) {
	for _, s := range []string{
		`{"model":"a","messages":[{"role":"user","content":"hi"}],"stream":true,"temperature":0.5}`,
		`{"Model":"\ud800x","MODEL":"b","any":[1,{"a":null}]}`, `{"max_tokens":1e3}`, `{"max_tokens":"x"}`,
		`{"stop":["a",null],"metadata":{"a":"b","a":"c"},"extra":{"k":[1, 2]}}`, `{"a":1,}`, `{"model":"\xff"}`,
		`{"model":"m","x":tru}`, `{"a":1} {}`, `null`, `[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var got, want request
		err := Unmarshal(b, &got)
		werr := stdjson.Unmarshal(b, &want)
		if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
			t.Fatalf("%q: error %v, encoding/json %v", b, err, werr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\n got %+v\nwant %+v", b, got, want)
		}
	})
}
