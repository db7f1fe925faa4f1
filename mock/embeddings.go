package mock

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/segmentio/encoding/json"
)

// This file serves embeddings: OpenAI's POST /v1/embeddings (and the
// compatible and Azure paths) and Gemini's :embedContent and
// :batchEmbedContents. A vector is a deterministic function of its text
// and size (unit length), so the same text always embeds the same way.

// endpointEmbed is an embeddings request. Scenario rules for "generate"
// (the default) fault it too; "embeddings" matches it alone.
const endpointEmbed = "embeddings"

// errBadInput is an embeddings request without texts (answered with the
// provider's invalid_request error).
var errBadInput = errors.New("no input to embed")

// embedReq is what the mock needs from an embeddings request.
type embedReq struct {
	texts []string
	dims  int  // requested size (0 = the model's)
	b64   bool // encoding_format base64
	batch bool // Gemini batchEmbedContents (else embedContent)
}

// embedDims is the vector size of the mock's embedding models, as the real
// ones; any other model gives 1536.
func embedDims(model string) int {
	switch {
	case strings.HasPrefix(model, "text-embedding-3-large"), strings.HasPrefix(model, "gemini-embedding"):
		return 3072
	case strings.HasPrefix(model, "text-embedding-004"), strings.HasPrefix(model, "embedding-001"):
		return 768
	case strings.HasPrefix(model, "mistral-embed"):
		return 1024
	}
	return 1536
}

// parseEmbedOpenAI reads an OpenAI embeddings request; input is a string or
// a list of strings (token-id input embeds its JSON text).
func parseEmbedOpenAI(body []byte) (*chat, *embedReq, error) {
	var r struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		Dimensions     int             `json:"dimensions"`
		EncodingFormat string          `json:"encoding_format"`
	}
	if err := decodeBody(body, &r); err != nil {
		return nil, nil, err
	}
	e := &embedReq{dims: r.Dimensions, b64: r.EncodingFormat == "base64"}
	var one string
	var many []json.RawMessage
	switch {
	case json.Unmarshal(r.Input, &one) == nil:
		e.texts = []string{one}
	case json.Unmarshal(r.Input, &many) == nil && len(many) > 0:
		for _, m := range many {
			var s string
			if json.Unmarshal(m, &s) != nil {
				s = string(m)
			}
			e.texts = append(e.texts, s)
		}
	default:
		return nil, nil, errBadInput
	}
	return &chat{model: r.Model, inputTokens: estimateTokens(body)}, e, nil
}

// parseEmbedGemini reads embedContent ({"content":...}) or
// batchEmbedContents ({"requests":[...]}), camelCase or snake_case.
func parseEmbedGemini(body []byte, model string, batch bool) (*chat, *embedReq, error) {
	type content struct {
		Parts []struct {
			Text string `json:"text"`
		} `json:"parts"`
	}
	type one struct {
		Content content `json:"content"`
		Dims    int     `json:"outputDimensionality"`
		Dims2   int     `json:"output_dimensionality"`
	}
	var r struct {
		one
		Requests []one `json:"requests"`
	}
	if err := decodeBody(body, &r); err != nil {
		return nil, nil, err
	}
	reqs := []one{r.one}
	if batch {
		reqs = r.Requests
	}
	if len(reqs) == 0 {
		return nil, nil, errBadInput
	}
	e := &embedReq{batch: batch}
	for _, q := range reqs {
		var texts []string
		for _, p := range q.Content.Parts {
			texts = append(texts, p.Text)
		}
		e.texts = append(e.texts, strings.Join(texts, " "))
		e.dims = max(q.Dims, q.Dims2)
	}
	return &chat{model: model, inputTokens: estimateTokens(body)}, e, nil
}

// parseEmbed reads an embeddings request into x; ok is false when the
// client went away.
func (x *reply) parseEmbed() (ok bool, parseErr error) {
	body, err := readBody(x.r)
	if err != nil {
		return false, nil
	}
	if x.rt.dialect == dialectGemini {
		x.chat, x.emb, parseErr = parseEmbedGemini(body, x.rt.model, x.rt.batch)
	} else {
		x.chat, x.emb, parseErr = parseEmbedOpenAI(body)
	}
	if x.chat != nil {
		if x.chat.model == "" {
			x.chat.model = x.rt.model
		}
		x.model = x.chat.model
	}
	return true, parseErr
}

// vector is the unit-length embedding of text with n dimensions.
func vector(text string, n int) []float32 {
	h := fnv.New64a()
	h.Write([]byte(text))
	seed := h.Sum64()
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	v := make([]float32, n)
	var sum float64
	for i := range v {
		f := rng.Float64()*2 - 1
		v[i] = float32(f)
		sum += f * f
	}
	norm := float32(math.Sqrt(sum))
	for i := range v {
		v[i] /= norm
	}
	return v
}

func appendVector(b []byte, v []float32, b64 bool) []byte {
	if b64 {
		raw := make([]byte, 4*len(v))
		for i, f := range v {
			binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(f))
		}
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, raw)
		return append(b, '"')
	}
	b = append(b, '[')
	for i, f := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, float64(f), 'g', -1, 32)
	}
	return append(b, ']')
}

// embeddingsBody builds the success answer in the request's dialect.
func (x *reply) embeddingsBody() []byte {
	e := x.emb
	n := e.dims
	if n <= 0 {
		n = embedDims(x.chat.model)
	}
	b := make([]byte, 0, 64+len(e.texts)*n*12)
	if x.rt.dialect == dialectGemini {
		if e.batch {
			b = append(b, `{"embeddings":[`...)
		} else {
			b = append(b, `{"embedding":`...)
		}
		for i, t := range e.texts {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"values":`...)
			b = appendVector(b, vector(t, n), false)
			b = append(b, '}')
		}
		if e.batch {
			b = append(b, ']')
		}
		return append(b, '}')
	}
	b = append(b, `{"object":"list","data":[`...)
	for i, t := range e.texts {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"object":"embedding","index":`...)
		b = appendInt(b, i)
		b = append(b, `,"embedding":`...)
		b = appendVector(b, vector(t, n), e.b64)
		b = append(b, '}')
	}
	b = append(b, `],"model":`...)
	b = json.AppendEscape(b, x.chat.model, 0)
	b = append(b, `,"usage":{"prompt_tokens":`...)
	b = appendInt(b, x.chat.inputTokens)
	b = append(b, `,"total_tokens":`...)
	b = appendInt(b, x.chat.inputTokens)
	return append(b, `}}`...)
}
