package openai

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"math"
	"net/url"
	"strconv"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/internal/rawjson"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/internal/httpcall"
)

// Embed implements provider.Embedder: POST {base}/embeddings (Azure:
// {endpoint}/openai/deployments/{model}/embeddings?api-version=) with the
// texts, asking for float vectors.
func (a *Adapter) Embed(ctx context.Context, req *provider.EmbedRequest) (*provider.EmbedResponse, error) {
	model := cmp.Or(req.Model, a.model)
	call := httpcall.Call{Provider: a.name, Model: model}
	body := make([]byte, 0, 64+len(model)+16*len(req.Input))
	if !a.azure {
		body = append(body, `{"model":`...)
		body = json.AppendEscape(body, model, 0)
		body = append(body, ',')
	} else {
		body = append(body, '{')
	}
	body = append(body, `"input":[`...)
	for i, s := range req.Input {
		if i > 0 {
			body = append(body, ',')
		}
		body = json.AppendEscape(body, s, 0)
	}
	body = append(body, `],"encoding_format":"float"`...)
	if req.Dimensions > 0 {
		body = append(body, `,"dimensions":`...)
		body = strconv.AppendInt(body, int64(req.Dimensions), 10)
	}
	if req.User != "" {
		body = append(body, `,"user":`...)
		body = json.AppendEscape(body, req.User, 0)
	}
	body = append(body, '}')
	u := a.base + "/embeddings"
	if a.azure {
		u = a.base + "/openai/deployments/" + url.PathEscape(model) + "/embeddings?api-version=" + url.QueryEscape(a.apiVersion)
	}
	resp, err := call.Post(ctx, a.client, u, body, a.hdr)
	if err != nil {
		return nil, err
	}
	out, _, err := httpcall.Decode(ctx, call, resp, func(b []byte) (*provider.EmbedResponse, error) { return DecodeEmbeddings(b, len(req.Input)) })
	if err != nil {
		return nil, err
	}
	if out.Model == "" {
		out.Model = model
	}
	out.Provider = a.name
	out.RequestID = requestID(resp.Header)
	return out, nil
}

// vector is an embedding as a JSON array of numbers or (encoding_format
// base64) a base64 string of little-endian float32s.
type vector []float32

// UnmarshalJSON implements json.Unmarshaler.
func (v *vector) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		s, err := rawjson.String(b)
		if err != nil {
			return err
		}
		raw, err := base64.StdEncoding.DecodeString(s)
		if err != nil || len(raw)%4 != 0 {
			return errors.New("embedding: not base64 float32s")
		}
		out := make([]float32, len(raw)/4)
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		*v = out
		return nil
	}
	var f []float32
	err := rawjson.Unmarshal(b, &f)
	*v = f
	return err
}

var errEmbedCount = errors.New("embeddings: not one vector per input")

// DecodeEmbeddings parses an OpenAI embeddings list into vectors in input
// order (by each item's index); n is the number of inputs sent.
func DecodeEmbeddings(body []byte, n int) (*provider.EmbedResponse, error) {
	var r struct {
		Model string `json:"model"`
		Data  []struct {
			Index     int    `json:"index"`
			Embedding vector `json:"embedding"`
		} `json:"data"`
		Usage *struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
		Error json.RawMessage `json:"error"`
	}
	if err := httpcall.Unmarshal(body, &r, &r.Error); err != nil {
		return nil, err
	}
	if len(r.Data) != n {
		return nil, errEmbedCount
	}
	out := &provider.EmbedResponse{Model: r.Model, Vectors: make([][]float32, n)}
	for _, d := range r.Data {
		if d.Index < 0 || d.Index >= n || out.Vectors[d.Index] != nil || len(d.Embedding) == 0 {
			return nil, errEmbedCount
		}
		out.Vectors[d.Index] = d.Embedding
	}
	if r.Usage != nil {
		out.Usage.InputTokens = r.Usage.PromptTokens
	}
	return out, nil
}
