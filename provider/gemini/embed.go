package gemini

import (
	"cmp"
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/internal/httpcall"
)

// maxBatch is how many texts one batchEmbedContents call takes.
const maxBatch = 100

// Embed implements provider.Embedder with batchEmbedContents
// ({base}/v1beta/models/{model}:batchEmbedContents), in calls of at most
// 100 texts; outputDimensionality carries Dimensions.
func (a *Adapter) Embed(ctx context.Context, req *provider.EmbedRequest) (*provider.EmbedResponse, error) {
	model := cmp.Or(req.Model, a.model)
	model = strings.TrimPrefix(model, "models/")
	out := &provider.EmbedResponse{Provider: a.name, Model: model, Vectors: make([][]float32, 0, len(req.Input))}
	for start := 0; start < len(req.Input); start += maxBatch {
		texts := req.Input[start:min(start+maxBatch, len(req.Input))]
		vs, rid, err := a.embedBatch(ctx, model, texts, req.Dimensions)
		if err != nil {
			return nil, err
		}
		out.Vectors = append(out.Vectors, vs...)
		out.RequestID = rid
	}
	return out, nil
}

func (a *Adapter) embedBatch(ctx context.Context, model string, texts []string, dims int) ([][]float32, string, error) {
	call := httpcall.Call{Provider: a.name, Model: model}
	name := json.AppendEscape(nil, "models/"+model, 0)
	body := append(make([]byte, 0, 64+48*len(texts)), `{"requests":[`...)
	for i, s := range texts {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, `{"model":`...)
		body = append(body, name...)
		body = append(body, `,"content":{"parts":[{"text":`...)
		body = json.AppendEscape(body, s, 0)
		body = append(body, `}]}`...)
		if dims > 0 {
			body = append(body, `,"outputDimensionality":`...)
			body = strconv.AppendInt(body, int64(dims), 10)
		}
		body = append(body, '}')
	}
	body = append(body, "]}"...)
	u := a.base + "/v1beta/models/" + url.PathEscape(model) + ":batchEmbedContents"
	resp, err := call.Post(ctx, a.client, u, body, a.hdr)
	if err != nil {
		return nil, "", err
	}
	vs, _, err := httpcall.Decode(ctx, call, resp, func(b []byte) ([][]float32, error) { return DecodeEmbeddings(b, len(texts)) })
	if err != nil {
		return nil, "", err
	}
	return vs, requestID(resp.Header), nil
}

var errEmbedCount = errors.New("embeddings: not one vector per input")

// DecodeEmbeddings parses a batchEmbedContents answer (or embedContent's
// single "embedding") into n vectors.
func DecodeEmbeddings(body []byte, n int) ([][]float32, error) {
	var r struct {
		Embeddings []struct {
			Values []float32 `json:"values"`
		} `json:"embeddings"`
		Embedding *struct {
			Values []float32 `json:"values"`
		} `json:"embedding"`
		Error json.RawMessage `json:"error"`
	}
	if err := httpcall.Unmarshal(body, &r, &r.Error); err != nil {
		return nil, err
	}
	if r.Embedding != nil {
		r.Embeddings = append(r.Embeddings, *r.Embedding)
	}
	if len(r.Embeddings) != n {
		return nil, errEmbedCount
	}
	out := make([][]float32, n)
	for i, e := range r.Embeddings {
		if len(e.Values) == 0 {
			return nil, errEmbedCount
		}
		out[i] = e.Values
	}
	return out, nil
}
