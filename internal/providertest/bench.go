package providertest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/llmguard/llmguard/provider"
)

// Bench is the benchmarks every adapter runs on ToolConversation: the full
// round trip, its encode and decode halves, and the bare net/http floor.
type Bench struct {
	// New returns the adapter under test, talking to baseURL.
	New func(baseURL string) provider.Adapter
	// Encode encodes a non-streaming request body.
	Encode func(*provider.Request) ([]byte, error)
	// Decode decodes a non-streaming success body.
	Decode func([]byte) (*provider.Response, error)
	// OK is the success body the upstream answers.
	OK string
	// Path is the request path of a non-streaming call, from the base URL.
	Path string
	// Header lists the adapter's request headers, name, value pairs.
	Header []string
}

// Chat is a full non-streaming round trip (encode, HTTP over 127.0.0.1
// with keep-alive, decode) of the tool conversation against an in-process
// httptest server; compare with Encode+Decode for what the adapter path
// adds.
func (bn Bench) Chat(b *testing.B) {
	up := Server(b, Reply(200, bn.OK))
	a := bn.New(up.URL)
	req := ToolConversation()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Chat(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// EncodeRequest encodes the tool conversation.
func (bn Bench) EncodeRequest(b *testing.B) {
	req := ToolConversation()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := bn.Encode(req); err != nil {
			b.Fatal(err)
		}
	}
}

// DecodeResponse decodes the success body.
func (bn Bench) DecodeResponse(b *testing.B) {
	body := []byte(bn.OK)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := bn.Decode(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BareHTTP is the same exchange (URL, body, headers) with net/http alone.
func (bn Bench) BareHTTP(b *testing.B) {
	up := Server(b, Reply(200, bn.OK))
	body, err := bn.Encode(ToolConversation())
	if err != nil {
		b.Fatal(err)
	}
	BenchmarkBareHTTP(b, up.URL+bn.Path, body, bn.Header...)
}

// degenerateBodies are the bodies every adapter's FuzzDecode is seeded
// with besides its own: empty, JSON that is not an answer, a cut event.
var degenerateBodies = []string{"", "null", "[]", "{}", "data: {\"x\n", "event: error\n"}

// FuzzDecode feeds arbitrary bytes (seeded with seeds, then
// degenerateBodies) to an adapter's response decoder and, as the body of a
// 200 event stream, to its stream (open makes the adapter's stream of a
// call to model "m" from the answer): neither may panic or loop, and a
// stream always ends (io.EOF or an error).
func FuzzDecode(f *testing.F, seeds []string, decode func([]byte) (*provider.Response, error), open func(*http.Response) provider.Stream) {
	for _, s := range append(seeds, degenerateBodies...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if resp, err := decode(b); err == nil && resp == nil {
			t.Fatal("Decode returned neither a response nor an error")
		}
		resp := &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(b))}
		st := open(resp)
		for i := 0; ; i++ {
			if _, err := st.Recv(); err != nil {
				break
			}
			if i > len(b)+10 {
				t.Fatalf("stream of %d bytes gave more than %d chunks", len(b), i)
			}
		}
	})
}
