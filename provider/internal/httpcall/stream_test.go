package httpcall

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/llmguard/llmguard/internal/sse"
	"github.com/llmguard/llmguard/provider"
)

// textDecoder decodes {"t":"..."} events; "end" is the terminator.
type textDecoder struct{}

func (textDecoder) Decode(ev sse.Event) ([]provider.Chunk, bool, error) {
	if string(ev.Data) == "end" {
		return nil, true, nil
	}
	var v struct{ T string }
	if err := json.Unmarshal(ev.Data, &v); err != nil {
		return nil, false, err
	}
	return []provider.Chunk{{Text: v.T}}, false, nil
}

// One malformed event in a healthy stream is skipped and counted; a stream
// of mostly malformed events fails (issue 13 item 2).
func TestStreamMalformedEvents(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		text       string
		malformed  int
		fails      bool
	}{
		{"one malformed event", `{"t":"a"}|{"t":"b|{"t":"c"}|end`, "ac", 1, false},
		{"two, among many", `{"t":"a"}|{"t":"b"}|x|{"t":"c"}|y|{"t":"d"}|end`, "abcd", 2, false},
		{"nothing but garbage", `x|y|z|{"t":"a"}|end`, "", 3, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			for _, d := range strings.Split(tt.body, "|") {
				b.WriteString("data: " + d + "\n\n")
			}
			resp := &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(b.String()))}
			s := Call{Provider: "p", Model: "m"}.NewStream(context.Background(), resp, textDecoder{}, "req_1")
			var text string
			var err error
			for {
				var c provider.Chunk
				if c, err = s.Recv(); err != nil {
					break
				}
				text += c.Text
			}
			if text != tt.text || s.MalformedEvents() != tt.malformed || (err != io.EOF) != tt.fails {
				t.Errorf("text %q, %d malformed, end %v; want %q, %d, fails %v", text, s.MalformedEvents(), err, tt.text, tt.malformed, tt.fails)
			}
		})
	}
}

// pingDecoder is textDecoder with "ping" events, which decode to no chunk.
type pingDecoder struct{ textDecoder }

func (d pingDecoder) Decode(ev sse.Event) ([]provider.Chunk, bool, error) {
	if string(ev.Data) == "ping" {
		return nil, false, nil
	}
	return d.textDecoder.Decode(ev)
}

// Buffered looks past events that give no chunk, and only at what was
// read: each strings.Reader below is one network read.
func TestStreamBuffered(t *testing.T) {
	body := io.MultiReader(
		strings.NewReader("data: {\"t\":\"a\"}\n\ndata: ping\n\ndata: {\"t\":\"b\"}\n\ndata: ping\n\ndata: {\"t\":"),
		strings.NewReader("\"c\"}\n\ndata: end\n\n"))
	resp := &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(body)}
	s := Call{Provider: "p", Model: "m"}.NewStream(context.Background(), resp, pingDecoder{}, "req_1")
	var got []string
	for {
		c, err := s.Recv()
		if err != nil {
			break
		}
		got = append(got, c.Text+"="+map[bool]string{true: "more", false: "wait"}[s.Buffered()])
	}
	if want := "a=more b=wait c=wait"; strings.Join(got, " ") != want {
		t.Errorf("chunk=Buffered %q, want %q", strings.Join(got, " "), want)
	}
}
