package anthropic

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/llmguard/llmguard/internal/providertest"
	"github.com/llmguard/llmguard/internal/sse"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/internal/httpcall"
)

// eventSeeds are stream events as the Messages API sends them, and the
// shapes the scan leaves to rawjson.Unmarshal.
var eventSeeds = []string{
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello \"world\"\n\u00e9"}}`,
	`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"city\": \"Par"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQB"}}`,
	`{"type":"content_block_stop","index":0}`, `{"type": "ping"}`, `{"type":"message_stop"}`,
	`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null}}`,
	`{"type":"message_start","message":{"id":"msg_1","model":"claude","usage":{"input_tokens":9}}}`,
	`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
	`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}`,
	`{"type":"a","type":"b"}`, `{"Type":"ping"}`, `{"index":1.5}`, `{"index":"1"}`, `{"delta":null}`, `{"delta":5}`,
	`{"delta":{"text":"a","text":"b"}}`, `null`, `[]`, `{}`, `{"type":"ping"`, ` {"type" : "ping" } `,
}

// FuzzScanEvent checks the event scan against rawjson.Unmarshal: where the
// scan reads an event, it reads what Unmarshal does, also on a scanner
// that read another event before (what it reuses).
func FuzzScanEvent(f *testing.F) {
	var sc eventScan
	providertest.FuzzScan(f, eventSeeds, eventSeeds[2], sc.scan)
}

// FuzzScanEventShape checks the scan of an event that is the one before
// with other bytes in place of its delta's text (read from the shape
// kept, with no walk) against rawjson.Unmarshal.
func FuzzScanEventShape(f *testing.F) {
	var sc eventScan
	mids := []string{`"tok "`, `"a\"b\u00e9\n"`, `""`, `"x`, `"a" , "b"`, `null`, `"\ud800"`, `"\x"`, "\"\x01\""}
	providertest.FuzzScanShape(f, eventSeeds[:4], mids, sc.scan, func() (int, int, bool) { return sc.from, sc.to, sc.texts == 1 })
}

// TestScanEventReads checks that the scan reads the events that carry
// tokens itself, and that a text delta allocates only its text.
func TestScanEventReads(t *testing.T) {
	providertest.ScanReads(t, eventSeeds[:8], func(b []byte) bool {
		var sc eventScan
		_, ok := sc.scan(b)
		return ok
	})
	var sc eventScan
	providertest.ScanAllocs(t, eventSeeds[0], func(b []byte) { sc.scan(b) })
}

// TestStreamReadsInPlace checks that a stream that is not relayed reads its
// events where they were read (httpcall.Borrower), not a copy of each.
func TestStreamReadsInPlace(t *testing.T) {
	ev := func(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }
	head := ev("message_start", eventSeeds[8]) + ev("content_block_start", eventSeeds[9])
	tail := ev("content_block_stop", eventSeeds[4]) + ev("message_delta", eventSeeds[10]) + ev("message_stop", eventSeeds[6])
	providertest.ReadsInPlace(t, head, ev("content_block_delta", eventSeeds[0]), tail, "Hello \"world\"\n\u00e9",
		func(body io.Reader, relay bool) provider.Stream {
			resp := &http.Response{Header: http.Header{}, Body: io.NopCloser(body)}
			call := httpcall.Call{Provider: "anthropic"}
			return call.NewStream(context.Background(), resp, &decoder{call: call, h: resp.Header, tools: map[int]int{}, relay: relay}, "")
		})
}

// BenchmarkDecodeStreamEvent decodes one text delta event of a stream.
func BenchmarkDecodeStreamEvent(b *testing.B) {
	ev := sse.Event{Name: "content_block_delta", Data: []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" Paris"}}`)}
	d := &decoder{call: httpcall.Call{Provider: "anthropic"}, h: http.Header{}, tools: map[int]int{}}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := d.Decode(ev); err != nil {
			b.Fatal(err)
		}
	}
}
