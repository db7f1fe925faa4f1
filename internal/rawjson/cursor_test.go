package rawjson

import (
	"encoding/json"
	"testing"
)

// walk reads the value at c, descending into arrays and into the values of
// objects' keys named in keys, reading strings with Text and numbers with
// Int where they are integers, and skipping the rest.
func walk(c *Cursor, keys []string) {
	switch c.peek() {
	case '{':
		if c.Object() {
			for c.Field(keys) >= 0 {
				walk(c, keys)
			}
		}
	case '[':
		if c.Array() {
			for c.Next() {
				walk(c, keys)
			}
		}
	case '"':
		c.Text("a")
	case 'n':
		c.Null()
	default:
		c.Skip()
	}
}

// walkKeys reads the value at c as walk does, descending into every
// object with NextKey and reading each string with Verbatim, or with Text
// when Verbatim leaves it.
func walkKeys(c *Cursor) {
	switch c.peek() {
	case '{':
		if c.Object() {
			for _, ok := c.NextKey(); ok; _, ok = c.NextKey() {
				walkKeys(c)
			}
		}
	case '[':
		if c.Array() {
			for c.Next() {
				walkKeys(c)
			}
		}
	case '"':
		start := c.Offset()
		if v := c.Verbatim(); v == nil {
			if c.Offset() != start {
				c.Fail() // Verbatim read what it left
			}
			c.Text("")
		} else if !Verbatim(v) {
			c.Fail()
		}
	default:
		c.Skip()
	}
}

// checkCursor checks that a cursor that descends into nothing but arrays
// reads exactly what json.Valid accepts, and one that also descends into
// objects only what it accepts (TestValid, FuzzValid); one that reads
// every key and takes strings with Verbatim reads exactly what json.Valid
// accepts, each string Verbatim takes being one Verbatim accepts.
func checkCursor(t *testing.T, in []byte) {
	valid := json.Valid(in)
	var c Cursor
	c.Reset(in)
	walk(&c, nil)
	if c.Done() != valid {
		t.Errorf("%q: walked whole %v, json.Valid says %v", in, c.Done(), valid)
	}
	c.Reset(in)
	walkKeys(&c)
	if c.Done() != valid {
		t.Errorf("%q: walked whole by keys %v, json.Valid says %v", in, c.Done(), valid)
	}
	c.Reset(in)
	walk(&c, []string{"a", "b", "c"})
	if c.Done() && !valid {
		t.Errorf("%q: walked whole descending objects, json.Valid says false", in)
	}
}

// TestCursorFields checks the fields a cursor reads against
// json.Unmarshal into a struct: the same values, and a failure on the
// shapes it leaves to Unmarshal.
func TestCursorFields(t *testing.T) {
	for _, tc := range []struct {
		in     string
		ok     bool
		a      string
		b      int
		failed bool
	}{
		{in: `{"a":"x","b":2,"z":[{"a":1}]}`, ok: true, a: "x", b: 2},
		{in: `{"a":"x\n","b":null}`, ok: true, a: "x\n"},
		{in: ` null `, ok: true},
		{in: `{"a":"x","a":"y"}`, failed: true},
		{in: `{"A":"x"}`, failed: true},
		{in: `{"ſ":"x"}`, failed: true},
		{in: `{"b":1.5}`, failed: true},
		{in: `{"b":"1"}`, failed: true},
		{in: `{"a":1}`, failed: true},
		{in: `{"a":"x"} x`},
		{in: `{"a":"x",}`, failed: true},
	} {
		var c Cursor
		c.Reset([]byte(tc.in))
		var a string
		var b int
		if c.Object() {
			for k := c.Field([]string{"a", "b"}); k >= 0; k = c.Field([]string{"a", "b"}) {
				if k == 0 {
					a = c.Text("")
				} else {
					b = c.Int()
				}
			}
		}
		if c.Done() != tc.ok || c.Failed() != tc.failed || tc.ok && (a != tc.a || b != tc.b) {
			t.Errorf("%s: done %v failed %v a %q b %d, want %v %v %q %d", tc.in, c.Done(), c.Failed(), a, b, tc.ok, tc.failed, tc.a, tc.b)
		}
	}
}
