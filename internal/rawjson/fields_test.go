package rawjson

import (
	"strings"
	"testing"
)

func TestReadFields(t *testing.T) {
	keys := []string{"id", "n"}
	tests := []struct {
		in    string
		valid bool
		ok    bool
		read  string // key=value, as read
	}{
		{`{"id":"a","x":1,"n":2}`, true, true, `id="a" n=2 `},
		{`null`, true, true, ``},
		{`{"n":1,"n":2}`, true, false, `n=1 `},       // twice: Unmarshal decides
		{`{"ID":"a"}`, true, false, ``},              // another case
		{"{\"\u017fd\":1}", true, false, ``},         // not ASCII
		{`{"i\u0064":"a"}`, true, true, `id="a" `},   // an escaped key is the key
		{`{"id":"a",}`, true, false, `id="a" `},      // invalid
		{`{"x":tru}`, true, false, ``},               // invalid where skipped
		{`{"x":tru}`, false, true, ``},               // not checked
		{`[1]`, true, false, ``},                     // not an object
		{`{"id":"stop"}`, true, false, `id="stop" `}, // read said no
	}
	for _, tt := range tests {
		var b strings.Builder
		ok := ReadFields([]byte(tt.in), tt.valid, keys, func(k string, v []byte) bool {
			b.WriteString(k + "=" + string(v) + " ")
			return string(v) != `"stop"`
		})
		if ok != tt.ok || b.String() != tt.read {
			t.Errorf("ReadFields(%s, valid %v) = %v reading %q; want %v reading %q", tt.in, tt.valid, ok, b.String(), tt.ok, tt.read)
		}
	}
}

func TestReadObjects(t *testing.T) {
	tests := []struct {
		in   string
		ok   bool
		read string
	}{
		{`[{"n":1},{"n":2,"x":3},{}]`, true, `n=1 | n=2 | | `},
		{`[{"n":1},{"n":1}]`, true, `n=1 | n=1 | `}, // a key once per element
		{`null`, true, ``},
		{`[{"n":1},2]`, false, `n=1 | `},
		{`[{"n":1,"n":2}]`, false, `n=1 `},
	}
	for _, tt := range tests {
		var b strings.Builder
		ok := ReadObjects([]byte(tt.in), []string{"n"}, func(k string, v []byte) bool {
			b.WriteString(k + "=" + string(v) + " ")
			return true
		}, func() bool { b.WriteString("| "); return true })
		if ok != tt.ok || b.String() != tt.read {
			t.Errorf("ReadObjects(%s) = %v reading %q; want %v reading %q", tt.in, ok, b.String(), tt.ok, tt.read)
		}
	}
}

func TestText(t *testing.T) {
	last := "gpt-4o"
	tests := []struct {
		in, want string
		ok, same bool
	}{
		{`"gpt-4o"`, "gpt-4o", true, true},
		{`"gpt\u002d4o"`, "gpt-4o", true, false},
		{`"other"`, "other", true, false},
		{`null`, "", true, false},
		{`nul`, "", false, false},
		{`5`, "", false, false},
		{`"`, "", false, false},
		{``, "", false, false},
	}
	for _, tt := range tests {
		got, ok := Text([]byte(tt.in), last)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Text(%s) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
		if tt.same && testing.AllocsPerRun(10, func() { Text([]byte(tt.in), last) }) != 0 {
			t.Errorf("Text(%s) allocates, want last itself", tt.in)
		}
	}
}
