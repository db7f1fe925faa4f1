package rawjson

import (
	"encoding/json"
	"strings"
	"testing"
)

var validCases = []string{
	``, ` `, `null`, ` true `, `false`, `nul`, `nulls`, `truex`, `0`, `-0`, `01`, `-`, `1.`, `1.5`, `.5`, `1e`, `1e+`, `1E-7`,
	`-12.5e+3`, `+1`, `1 2`, `""`, `"`, `"\u00e9\n\"\\\/\b\f\r\t"`, `"\u00g0"`, `"\u12"`, `"\x"`, "\"a\tb\"", "\"\xff\xfe\"",
	`[]`, `[ ]`, `[1,]`, `[,1]`, `[1 2]`, `[1,[2,{"a":[]}]]`, `{}`, `{ }`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{a:1}`,
	`{"a":1 "b":2}`, `{"a" : 1 , "b" : [ true , null ] }`, `{"a":1}}`, `[1]]`, `{"a":"}"}`, `{"\u00e9":0}`, "\t{}\r\n",
	`{"id":"chatcmpl-1","choices":[{"index":0,"message":{"role":"assistant","content":"hi","refusal":null}}],"usage":{"prompt_tokens":5}}`,
}

func TestValid(t *testing.T) {
	for _, in := range validCases {
		if got, want := Valid([]byte(in)), json.Valid([]byte(in)); got != want {
			t.Errorf("Valid(%q) = %v, json.Valid says %v", in, got, want)
		}
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
	})
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
}
