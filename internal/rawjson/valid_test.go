package rawjson

import (
	"encoding/json"
	"strings"
	"testing"

	segjson "github.com/segmentio/encoding/json"

	"github.com/google/go-cmp/cmp"
)

var validCases = []string{
	``, ` `, `null`, ` true `, `false`, `nul`, `nulls`, `truex`, `0`, `-0`, `01`, `-`, `1.`, `1.5`, `.5`, `1e`, `1e+`, `1E-7`,
	`-12.5e+3`, `+1`, `1 2`, `""`, `"`, `"\u00e9\n\"\\\/\b\f\r\t"`, `"\u00g0"`, `"\u12"`, `"\x"`, "\"a\tb\"", "\"\xff\xfe\"",
	`[]`, `[ ]`, `[1,]`, `[,1]`, `[1 2]`, `[1,[2,{"a":[]}]]`, `{}`, `{ }`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{a:1}`,
	`{"a":1 "b":2}`, `{"a" : 1 , "b" : [ true , null ] }`, `{"a":1}}`, `[1]]`, `{"a":"}"}`, `{"\u00e9":0}`, "\t{}\r\n",
	`{"a":{"b":[1,2,{"c":"\u0041"}]},"d":-1.5e3,"e\"k":true}`, `{"a":[1,}`, `{"a":tru}`, `{"a":"x\q"}`, `{"a":01}`, "{\"a\x01\":1}",
	`{"id":"chatcmpl-1","choices":[{"index":0,"message":{"role":"assistant","content":"hi","refusal":null}}],"usage":{"prompt_tokens":5}}`,
	`{"a":{"b":[1,{"a":2}]},"A":1}`, `{"a":1,"a":2}`, `{"\u0061":[{}]}`, `{"a":"\u00e9"}`, `[{"a":[{"b":[]}]},null,"x",1.5,-2]`,
	`{"a":null,"b":{"c":"x"}}`, `{"b":1,"c"}`, `{"a":[1,2,]}`, `[{"a":}]`,
}

func TestValid(t *testing.T) {
	for _, in := range validCases {
		if got, want := Valid([]byte(in)), json.Valid([]byte(in)); got != want {
			t.Errorf("Valid(%q) = %v, json.Valid says %v", in, got, want)
		}
		checkCursor(t, []byte(in))
	}
}

func TestValidDepth(t *testing.T) {
	for _, n := range []int{maxDepth, maxDepth + 1} {
		for _, open := range []string{"[", `{"a":`} {
			close := "]"
			if open != "[" {
				close = "}"
			}
			in := []byte(strings.Repeat(open, n) + "1" + strings.Repeat(close, n))
			if got, want := Valid(in), json.Valid(in); got != want {
				t.Errorf("depth %d %s: Valid = %v, json.Valid says %v", n, open, got, want)
			}
			checkCursor(t, in)
		}
	}
}

func FuzzValid(f *testing.F) {
	for _, in := range validCases {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if got, want := Valid(in), json.Valid(in); got != want {
			t.Errorf("Valid(%q) = %v, json.Valid says %v", in, got, want)
		}
		checkEachFieldValid(t, in)
		checkCursor(t, in)
	})
}

func TestEachFieldValid(t *testing.T) {
	for _, in := range validCases {
		checkEachFieldValid(t, []byte(in))
	}
}

// checkEachFieldValid: EachFieldValid succeeds exactly on valid objects and
// null, with the fields EachField gives.
func checkEachFieldValid(t *testing.T, in []byte) {
	t.Helper()
	var got, want []string
	err := EachFieldValid(in, func(k, v []byte) error {
		got = append(got, string(k)+"="+string(v))
		return nil
	})
	t0 := trimSpace(in)
	wantOK := json.Valid(in) && (t0[0] == '{' || string(t0) == "null")
	if (err == nil) != wantOK {
		t.Fatalf("EachFieldValid(%q) = %v, want ok %v", in, err, wantOK)
	}
	if !wantOK {
		return
	}
	if err := EachField(in, func(k, v []byte) error {
		want = append(want, string(k)+"="+string(v))
		return nil
	}); err != nil {
		t.Fatalf("EachField(%q) = %v on a valid object", in, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("EachFieldValid(%q) fields (-EachField +EachFieldValid):\n%s", in, diff)
	}
}

func BenchmarkValid(b *testing.B) {
	body := []byte(validCases[len(validCases)-1])
	b.Run("rawjson", func(b *testing.B) {
		for b.Loop() {
			Valid(body)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			json.Valid(body)
		}
	})
	b.Run("library", func(b *testing.B) {
		for b.Loop() {
			segjson.Valid(body)
		}
	})
}
