package gateway

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"testing/synctest"
)

const embedConfig = `
providers:
  openai: {base_url: UP/v1, api_key: test-oai-key}
  gemini: {base_url: UP, api_key: AIzaTestKey}
  anthropic: {base_url: UP, api_key: test-ant-key}
  mistral: {base_url: UP/mistral/v1, api_key: test-mistral-key}
routes:
  default:
    targets: [openai/text-embedding-3-small]
  down-to-gemini:
    targets: ["openai/text-embedding-3-small+fault=503", anthropic/claude-sonnet-4-5, gemini/gemini-embedding-001]
    retry: {max_attempts: 2}
  down-to-mistral:
    targets: ["openai/text-embedding-3-small+fault=503", mistral/mistral-embed]
    retry: {max_attempts: 1}
  bad-request:
    targets: ["openai/text-embedding-3-small+fault=invalid_request", gemini/gemini-embedding-001]
models:
  "openai/text-embedding-3-small+fault=503": {context_window: 8191, dimensions: 1536, min_dimensions: 1}
  "openai/text-embedding-3-small+fault=invalid_request": {context_window: 8191, dimensions: 1536, min_dimensions: 1}
`

type embedList struct {
	Object string `json:"object"`
	Model  string `json:"model"`
	Data   []struct {
		Object    string          `json:"object"`
		Index     int             `json:"index"`
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	Usage struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

func (l *embedList) vectors(t *testing.T) [][]float32 {
	t.Helper()
	var out [][]float32
	for _, d := range l.Data {
		var v []float32
		if len(d.Embedding) > 0 && d.Embedding[0] == '"' {
			var s string
			json.Unmarshal(d.Embedding, &s)
			raw, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i+4 <= len(raw); i += 4 {
				v = append(v, math.Float32frombits(binary.LittleEndian.Uint32(raw[i:])))
			}
		} else if err := json.Unmarshal(d.Embedding, &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func (st *rsStack) embed(t *testing.T, body string) (reply, *embedList) {
	t.Helper()
	rep := st.post(t, "/v1/embeddings", body)
	var l embedList
	if rep.status == 200 {
		if err := json.Unmarshal(rep.body, &l); err != nil {
			t.Fatalf("%s: %v", rep.body, err)
		}
	}
	return rep, &l
}

// Issue 10 item 5: POST /v1/embeddings through the engine, in OpenAI's
// shape, float or base64.
func TestEmbeddings(t *testing.T) {
	st := newUpStack(t, embedConfig)
	rep, l := st.embed(t, `{"model":"openai/text-embedding-3-small","input":["hello","world"]}`)
	vs := l.vectors(t)
	if rep.status != 200 || l.Object != "list" || l.Model != "text-embedding-3-small" || len(vs) != 2 || len(vs[0]) != 1536 ||
		l.Data[1].Index != 1 || l.Data[0].Object != "embedding" || l.Usage.PromptTokens == 0 {
		t.Fatalf("%d %s", rep.status, rep.body[:min(len(rep.body), 300)])
	}
	if rep.header.Get("X-Llmguard-Target") != "openai/text-embedding-3-small" || rep.header.Get("X-Request-Id") == "" {
		t.Errorf("headers %v", rep.header)
	}
	if up := st.up.last(t); up.path != "/v1/embeddings" || !bytes.Contains(up.req, []byte(`"input":["hello","world"]`)) {
		t.Errorf("upstream %s %s", up.path, up.req)
	}
	// base64 (the openai SDK's default) decodes to the same floats.
	_, lb := st.embed(t, `{"model":"default","input":["hello","world"],"encoding_format":"base64"}`)
	vb := lb.vectors(t)
	if len(vb) != 2 || len(vb[0]) != 1536 || vb[0][7] != vs[0][7] || vb[1][1535] != vs[1][1535] {
		t.Errorf("base64 vectors differ")
	}
	_, ld := st.embed(t, `{"model":"default","input":"hello","dimensions":256}`)
	if v := ld.vectors(t); len(v) != 1 || len(v[0]) != 256 {
		t.Errorf("dimensions 256: %v", len(v))
	}
}

// Retries then falls back, across providers, only to a target that gives
// vectors of the same size: Gemini is asked for 1536 dimensions, Anthropic
// (no embeddings API) and a fixed 1024-dimension model are passed over.
func TestEmbeddingsFallback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newUpStack(t, embedConfig)
		rep, l := st.embed(t, `{"model":"down-to-gemini","input":["hello"]}`)
		if rep.status != 200 || rep.header.Get("X-Llmguard-Target") != "gemini/gemini-embedding-001" ||
			rep.header.Get("X-Llmguard-Attempts") != "3" || rep.header.Get("X-Llmguard-Fallbacks") != "1" {
			t.Fatalf("%d %v %s", rep.status, rep.header, rep.body)
		}
		if v := l.vectors(t); len(v) != 1 || len(v[0]) != 1536 {
			t.Errorf("vectors %d", len(v[0]))
		}
		up := st.up.last(t)
		if up.path != "/v1beta/models/gemini-embedding-001:batchEmbedContents" || !bytes.Contains(up.req, []byte(`"outputDimensionality":1536`)) {
			t.Errorf("upstream %s %s", up.path, up.req)
		}
		for _, e := range st.up.seen {
			if strings.Contains(e.path, "messages") {
				t.Errorf("anthropic was called: %s", e.path)
			}
		}

		rep, _ = st.embed(t, `{"model":"down-to-mistral","input":["hello"]}`)
		d, _, msg := errorDialect(t, rep.header.Get("Content-Type"), rep.body)
		if rep.status != 503 || d != DialectOpenAI || !strings.Contains(msg, "gives 1024-dimension vectors, the call needs 1536") {
			t.Errorf("%d %s", rep.status, rep.body)
		}
		// Asked for 1024, the fixed-size model qualifies.
		rep, _ = st.embed(t, `{"model":"down-to-mistral","input":["hello"],"dimensions":1024}`)
		if rep.status != 200 || rep.header.Get("X-Llmguard-Target") != "mistral/mistral-embed" {
			t.Errorf("%d %s", rep.status, rep.body)
		}
		if up := st.up.last(t); bytes.Contains(up.req, []byte("dimensions")) {
			t.Errorf("a fixed-size model was sent dimensions: %s", up.req)
		}

		// A request the provider rejects is its 400, not tried elsewhere.
		st.up.reset()
		rep, _ = st.embed(t, `{"model":"bad-request","input":["hello"]}`)
		if rep.status != 400 || len(st.up.seen) != 1 {
			t.Errorf("%d %s (%d upstream calls)", rep.status, rep.body, len(st.up.seen))
		}
	})
}

func TestEmbeddingsBadRequests(t *testing.T) {
	st := newUpStack(t, embedConfig)
	for _, body := range []string{
		`{"model":"default"}`,
		`{"model":"default","input":[]}`,
		`{"model":"default","input":[[1,2,3]]}`,
		`{"model":"default","input":[1,2]}`,
		`{"model":"default","input":"x","dimensions":0}`,
		`{"model":"default","input":"x","encoding_format":"int8"}`,
		`{"input":"x"}`,
		`[]`,
	} {
		st.up.reset()
		rep := st.post(t, "/v1/embeddings", body)
		d, typ, msg := errorDialect(t, rep.header.Get("Content-Type"), rep.body)
		if rep.status != 400 || d != DialectOpenAI || typ != "invalid_request_error" || strings.Contains(msg, "\n") || len(st.up.seen) != 0 {
			t.Errorf("%s: %d %s", body, rep.status, rep.body)
		}
	}
}

// A route with no target that can give the call's vectors is the request's
// fault (400, no retry), not an outage.
func TestEmbeddingsUnservable(t *testing.T) {
	st := newUpStack(t, strings.Replace(embedConfig, "routes:\n", "routes:\n  chat-only: {targets: [anthropic/claude-sonnet-4-5]}\n", 1))
	for _, body := range []string{
		`{"model":"chat-only","input":"x"}`,
		`{"model":"default","input":"x","dimensions":4096}`,
	} {
		st.up.reset()
		rep := st.post(t, "/v1/embeddings", body)
		_, _, msg := errorDialect(t, rep.header.Get("Content-Type"), rep.body)
		if rep.status != 400 || rep.header.Get("X-Should-Retry") != "false" || !strings.Contains(msg, "no target can serve") || len(st.up.seen) != 0 {
			t.Errorf("%s: %d %v %s", body, rep.status, rep.header, rep.body)
		}
	}
}
