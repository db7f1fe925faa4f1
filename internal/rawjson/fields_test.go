package rawjson

import (
	"testing"
)

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
