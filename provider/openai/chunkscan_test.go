package openai

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/llmguard/llmguard/internal/providertest"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/internal/httpcall"
)

// chunkSeeds are stream events as OpenAI and compatible servers send them,
// and the unusual shapes the scan leaves to rawjson.Unmarshal.
var chunkSeeds = []string{
	`{"id":"chatcmpl-S","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4.1-2025-04-14","service_tier":"default","system_fingerprint":"fp_b705f0c291","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"x"}`,
	`{"id":"chatcmpl-S","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":" Par\"is\n\u00e9"},"finish_reason":null}]}`,
	`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}`,
	`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"city\":"}}]}}]}`,
	`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	`{"id":"c","choices":[],"usage":{"prompt_tokens":20,"completion_tokens":100,"total_tokens":120,"prompt_tokens_details":{"cached_tokens":4,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":2,"audio_tokens":null}}}`,
	`{"choices":[{"index":1,"delta":{"content":"b"}},{"index":0,"delta":{"content":"a"},"finish_reason":"length"}]}`,
	`{"error":{"code":502,"message":"Provider returned error"},"choices":[{"index":0,"delta":{},"finish_reason":"error"}]}`,
	`{"error":null,"choices":null,"usage":{"prompt_tokens_details":null}}`,
	`{"choices":[{"index":0,"delta":{"content":[{"type":"text","text":"a"}]}}]}`,
	`{"choices":[{"index":0,"message":{"content":"a"}}]}`, `{"choices":[null]}`, `{"choices":[{"index":1e2}]}`,
	`{"id":"a","id":"b"}`, `{"ID":"a"}`, `{"ſervice_tier":"a"}`, `{"usage":{"prompt_tokens":1},"usage":{"completion_tokens":2}}`,
	`{"id":5}`, `{"choices":[{"delta":null}]}`, `{"choices":[{"delta":{"tool_calls":[{"index":null}]}}]}`,
	`{"usage":{"prompt_tokens_details":3}}`, `{"id":"a\u00e9\n"}`, `{"id":"a\\"}`, `null`, `[]`, `{}`, ` {"id" : "x" } `, `{"id":"x"}}`, `{"id":"x`,
}

// FuzzScanChunk checks the chunk scan against rawjson.Unmarshal: where the
// scan reads an event, it reads what Unmarshal does, also on a scanner
// that read another event before (what it reuses).
func FuzzScanChunk(f *testing.F) {
	var sc chunkScan
	providertest.FuzzScan(f, chunkSeeds, chunkSeeds[0], sc.scan)
}

// TestScanChunkReads checks that the scan reads the events streams carry
// itself (it would be no faster leaving them to Unmarshal).
func TestScanChunkReads(t *testing.T) {
	providertest.ScanReads(t, chunkSeeds[:9], func(b []byte) bool {
		var sc chunkScan
		_, ok := sc.scan(b)
		return ok
	})
}

// TestScanChunkAllocs checks that reading a text delta allocates only its
// text once the stream's id and model were read.
func TestScanChunkAllocs(t *testing.T) {
	var sc chunkScan
	providertest.ScanAllocs(t, chunkSeeds[1], func(b []byte) { sc.scan(b) })
}

// TestStreamReadsInPlace checks that a stream that is not relayed reads its
// events where they were read (httpcall.Borrower), not a copy of each.
func TestStreamReadsInPlace(t *testing.T) {
	providertest.ReadsInPlace(t, "", "data: "+chunkSeeds[1]+"\n\n", "data: [DONE]\n\n", " Par\"is\n\u00e9",
		func(body io.Reader, relay bool) provider.Stream {
			resp := &http.Response{Header: http.Header{}, Body: io.NopCloser(body)}
			call := httpcall.Call{Provider: "openai"}
			return call.NewStream(context.Background(), resp, &decoder{call: call, h: resp.Header, relay: relay}, "")
		})
}

// BenchmarkStreamEvents reads a relayed stream of 1,000 text deltas from
// memory (SSE reader, decoder, the event kept for the relay): the
// adapter's cost per event, without the network. Each op is one event.
func BenchmarkStreamEvents(b *testing.B) {
	const events = 1000
	var body bytes.Buffer
	for range events {
		body.WriteString("data: " + chunkSeeds[0] + "\n\n")
	}
	body.WriteString("data: [DONE]\n\n")
	b.ReportAllocs()
	b.SetBytes(int64(body.Len() / events))
	for i := 0; i < b.N; i += events {
		resp := &http.Response{Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(body.Bytes()))}
		call := httpcall.Call{Provider: "openai"}
		st := call.NewStream(context.Background(), resp, &decoder{call: call, h: resp.Header, relay: true}, "")
		for {
			if _, err := st.Recv(); err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
		}
	}
}

// FuzzScanChunkShape checks the scan of a chunk that is the one before
// with other bytes in place of its content string (read from the shape
// kept, with no walk) against rawjson.Unmarshal.
func FuzzScanChunkShape(f *testing.F) {
	var sc chunkScan
	bases := []string{chunkSeeds[0], chunkSeeds[1],
		`{"id":"c","choices":[{"index":0,"delta":{"content":"a","tool_calls":[{"index":0,"function":{"arguments":"{"}}]},"finish_reason":null}],"usage":{"prompt_tokens":1}}`}
	providertest.FuzzScanShape(f, bases, shapeMids, sc.scan, func() (int, int, bool) { return sc.from, sc.to, sc.texts == 1 })
}

// shapeMids are what FuzzScanChunkShape and FuzzScanEventShape put in
// place of a text: strings, and what is not one string.
var shapeMids = []string{`"tok "`, `"a\"b\u00e9\n"`, `""`, `"x`, `"a" , "b"`, `null`, `"\ud800"`, `"\x"`, "\"\x01\""}
