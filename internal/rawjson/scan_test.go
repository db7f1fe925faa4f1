package rawjson

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEachField(t *testing.T) {
	tests := []struct {
		in      string
		want    []string // key=value pairs
		wantErr bool
	}{
		{in: `{}`, want: nil},
		{in: `null`, want: nil},
		{in: ` { "a" : 1 , "b":"x,}" ,"c":{"d":[1,{"e":"]"}]},"f":null } `, want: []string{`a=1`, `b="x,}"`, `c={"d":[1,{"e":"]"}]}`, `f=null`}},
		{in: `{"k\u0065y":true}`, want: []string{`key=true`}},
		{in: `{"a":"q\"}"}`, want: []string{`a="q\"}"`}},
		{in: `{"a":1`, wantErr: true},
		{in: `{"a":{"b":1}`, wantErr: true},
		{in: `{"a":"unterminated}`, wantErr: true},
		{in: `{"a":1}x`, wantErr: true},
		{in: `{"a" 1}`, wantErr: true},
		{in: `{a:1}`, wantErr: true},
		{in: `[1]`, wantErr: true},
		{in: `{"a":}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var got []string
			err := EachField([]byte(tt.in), func(k, v []byte) error {
				got = append(got, string(k)+"="+string(v))
				return nil
			})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); !tt.wantErr && diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEachElement(t *testing.T) {
	var got []string
	if err := EachElement([]byte(` [1, "a]", {"b":[2]} ,null] `), func(e []byte) error {
		got = append(got, string(e))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{`1`, `"a]"`, `{"b":[2]}`, `null`}, got); diff != "" {
		t.Errorf("elements (-want +got):\n%s", diff)
	}
	for _, bad := range []string{`[1,`, `[1 2]`, `{}`, `[1]]`} {
		if err := EachElement([]byte(bad), func([]byte) error { return nil }); err == nil {
			t.Errorf("EachElement(%s) = nil, want an error", bad)
		}
	}
}

func TestScalars(t *testing.T) {
	strs := []struct {
		in, want string
		err      bool
	}{
		{`"plain"`, "plain", false},
		{`null`, "", false},
		{`"tab\tnl\n\u00e9"`, "tab\tnl\né", false},
		{"\"bad utf8 \xff\"", "bad utf8 \uFFFD", false},
		{`5`, "", true},
		{`"open`, "", true},
	}
	for _, tt := range strs {
		got, err := String([]byte(tt.in))
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("String(%s) = %q, %v; want %q (error %v)", tt.in, got, err, tt.want, tt.err)
		}
	}
	ints := []struct {
		in   string
		want int
		err  bool
	}{{`42`, 42, false}, {`-3`, -3, false}, {`null`, 0, false}, {`1.5`, 0, true}, {`"1"`, 0, true}, {`1e2`, 0, true}}
	for _, tt := range ints {
		got, err := Int([]byte(tt.in))
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("Int(%s) = %d, %v; want %d (error %v)", tt.in, got, err, tt.want, tt.err)
		}
	}
}

// FuzzEachObject checks EachObject against EachElement and EachField: the
// same fields and elements when both succeed, an error when either fails.
func FuzzEachObject(f *testing.F) {
	for _, s := range []string{`[{"role":"user","content":"hi \"x\""},"s",null,{"a":{"b":[1,"]"]}},{}]`, `[{"a" 1}]`, `[{"a":1,}]`,
		`[{"a":1}}]`, `null`, `[]`, `[{"k\u0065y":true} ,[{}] ]`, `[{"a":"\"}"]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want, got []string
		werr := EachElement(b, func(el []byte) error {
			if len(el) > 0 && el[0] == '{' {
				if err := EachField(el, func(k, v []byte) error { want = append(want, string(k)+"="+string(v)); return nil }); err != nil {
					return err
				}
			}
			want = append(want, "done "+string(el))
			return nil
		})
		gerr := EachObject(b, func(k, v []byte) error { got = append(got, string(k)+"="+string(v)); return nil },
			func(i int, el []byte) error { got = append(got, "done "+string(el)); return nil })
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%q: EachObject error %v, EachElement and EachField %v", b, gerr, werr)
		}
		if werr == nil && !cmp.Equal(want, got) {
			t.Fatalf("%q:\n%s", b, cmp.Diff(want, got))
		}
		// EachObjectValid: the same walk, failing exactly when a key or
		// value of an object element is not valid JSON.
		allValid := true
		var valid []string
		verr := EachObjectValid(b, func(k, v []byte) error {
			valid = append(valid, string(k)+"="+string(v))
			return nil
		}, func(i int, el []byte) error { valid = append(valid, "done "+string(el)); return nil })
		if gerr == nil {
			_ = EachObject(b, func(k, v []byte) error {
				allValid = allValid && Valid(v)
				return nil
			}, func(int, []byte) error { return nil })
			if (verr == nil) != allValid {
				t.Fatalf("%q: EachObjectValid error %v, values valid %v", b, verr, allValid)
			}
			if verr == nil && !cmp.Equal(got, valid) {
				t.Fatalf("%q: EachObjectValid:\n%s", b, cmp.Diff(got, valid))
			}
		}
	})
}
