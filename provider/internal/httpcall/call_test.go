package httpcall

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/provider"
)

// TestPostParts: a body of parts arrives whole, with its Content-Length,
// also when the transport sends it again on a fresh connection (GetBody).
func TestPostParts(t *testing.T) {
	parts := [][]byte{[]byte(`{"model":"m",`), []byte(strings.Repeat(`"x":"\"y\"\n",`, 5000)), []byte(`"z":1}`)}
	want := string(bytes.Join(parts, nil))
	var got []string
	var lengths []int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, string(b))
		lengths = append(lengths, r.ContentLength)
		if len(got) == 1 {
			// Close the kept connection: the next request goes on a new one.
			w.Header().Set("Connection", "close")
		}
	}))
	defer srv.Close()
	for range 2 {
		resp, err := Call{Provider: "p"}.PostParts(t.Context(), srv.Client(), srv.URL, parts, nil, NewHeaders())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	hr, err := NewRequestParts(t.Context(), srv.URL, parts, nil, NewHeaders())
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		b, err := hr.GetBody()
		if err != nil {
			t.Fatal(err)
		}
		if s, _ := io.ReadAll(b); string(s) != want {
			t.Errorf("GetBody read %d bytes, want %d", len(s), len(want))
		}
	}
	if len(got) != 2 || got[0] != want || got[1] != want || lengths[0] != int64(len(want)) || lengths[1] != int64(len(want)) {
		t.Errorf("upstream read %d bodies (lengths %v), want 2 of %d bytes", len(got), lengths, len(want))
	}
}

// TestMarshal: Marshal encodes as json.Marshal does, into one buffer of
// about the request's size.
func TestMarshal(t *testing.T) {
	req := &provider.Request{System: "be <brief>", Messages: []provider.Message{{Role: "user", Content: []provider.Part{
		{Type: provider.PartText, Text: strings.Repeat("fmt.Println(\"hello\") // one line of code, & more é\n", 500)}}}}}
	v := map[string]any{"b": req.Messages, "a": req.System}
	got, err := Marshal(v, req)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(v)
	if string(got) != string(want) {
		t.Errorf("Marshal = %.80s..., json.Marshal %.80s...", got, want)
	}
	if h := SizeHint(req); cap(got) != h || h < len(got) {
		t.Errorf("Marshal's buffer: cap %d for %d bytes, SizeHint %d", cap(got), len(got), h)
	}
}
