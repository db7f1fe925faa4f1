package gateway

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/internal/rawjson"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/resilience"
)

// EmbedEngine is what POST /v1/embeddings needs of the engine besides
// Engine; *resilience.Engine implements it. An Engine without it answers
// embeddings requests with 501.
type EmbedEngine interface {
	Embed(ctx context.Context, c *resilience.EmbedCall) (*resilience.EmbedResult, error)
}

// maxEmbedInputs bounds the texts of one embeddings request (OpenAI's own
// limit).
const maxEmbedInputs = 2048

// embedInbound is a decoded embeddings request.
type embedInbound struct {
	model     string
	req       provider.EmbedRequest
	fallbacks []string
	base64    bool
}

// decodeEmbeddings decodes an OpenAI embeddings body: input as a string or
// a list of strings (token ids are refused: the route's targets need not
// share a tokenizer), dimensions, encoding_format, user, and the gateway's
// fallbacks.
func decodeEmbeddings(body []byte) (*embedInbound, error) {
	in := &embedInbound{}
	hasInput := false
	err := eachField(body, func(k string, v json.RawMessage) error {
		var err error
		switch k {
		case "model":
			in.model, err = rawjson.String(v)
		case "input":
			hasInput = true
			in.req.Input, err = embedInput(v)
		case "dimensions":
			if !rawjson.IsNull(v) {
				err = unmarshalInt(v, &in.req.Dimensions)
				if err == nil && in.req.Dimensions <= 0 {
					err = badRequest("must be a positive whole number")
				}
			}
		case "encoding_format":
			var f string
			if f, err = rawjson.String(v); err == nil {
				switch f {
				case "float", "":
				case "base64":
					in.base64 = true
				default:
					err = badRequest("must be \"float\" or \"base64\"")
				}
			}
		case "user":
			if !rawjson.IsNull(v) {
				in.req.User, err = rawjson.String(v)
			}
		case "fallbacks":
			in.fallbacks, err = stringOrList(v)
		}
		if re, ok := err.(*requestError); ok {
			return badRequest("invalid %q: %s", k, re.msg)
		}
		if err != nil {
			return badRequest("invalid %q: %v", k, err)
		}
		return nil
	})
	if err != nil {
		return nil, notObjectFault(err)
	}
	switch {
	case in.model == "":
		return nil, badRequest("missing \"model\"")
	case !hasInput || len(in.req.Input) == 0:
		return nil, badRequest("missing \"input\" (a string or a list of strings)")
	case len(in.req.Input) > maxEmbedInputs:
		return nil, badRequest("\"input\" has %d texts, at most %d per request", len(in.req.Input), maxEmbedInputs)
	}
	return in, nil
}

// embedInput decodes a string or a list of strings.
func embedInput(v json.RawMessage) ([]string, error) {
	v = bytes.TrimSpace(v)
	if len(v) > 0 && v[0] == '"' {
		s, err := rawjson.String(v)
		return []string{s}, err
	}
	var out []string
	err := rawjson.EachElement(v, func(el []byte) error {
		if len(el) == 0 || el[0] != '"' {
			return badRequest("token ids are not supported (the route's targets may not share a tokenizer): send text")
		}
		s, err := rawjson.String(el)
		out = append(out, s)
		return err
	})
	return out, err
}

// serveEmbeddings serves POST /v1/embeddings through the engine: retries,
// breakers and fallback across the route's embedding targets that give
// vectors of the same size, on OpenAI-compatible APIs and Gemini.
func (s *Server) serveEmbeddings(w http.ResponseWriter, r *http.Request, dialect string) {
	ee, ok := s.eng.(EmbedEngine)
	if !ok {
		writeError(w, dialect, &apiError{status: http.StatusNotImplemented, kind: kindInvalidRequest, retry: "false",
			message: "this gateway's engine does not serve embeddings"})
		return
	}
	in, ok := readRequest(s, w, r, dialect, decodeEmbeddings)
	if !ok {
		return
	}
	accessOf(w).noteModel(in.model, false)
	route, fallbacks, ok := s.routeFor(w, dialect, in.model, in.fallbacks)
	if !ok {
		return
	}
	accessOf(w).noteRoute(route)
	ec := &resilience.EmbedCall{Route: route, Request: &in.req, Fallbacks: fallbacks}
	if a := accessOf(w); a != nil && a.span != nil {
		ec.OnEvent = a.span.Event
	}
	res, err := ee.Embed(r.Context(), ec)
	if errors.Is(err, resilience.ErrUnservable) {
		// No target of the route embeds, or none gives the size asked for.
		accessOf(w).noteFailure(err)
		writeError(w, dialect, errBadRequest(err.Error()))
		return
	}
	if err != nil {
		s.fail(w, r, dialect, route, err)
		return
	}
	resp := res.Response
	if a := accessOf(w); a != nil {
		a.embed, a.usage, a.respModel = true, provider.Usage{InputTokens: resp.Usage.InputTokens}, resp.Model
	}
	setResultHeaders(w.Header(), dialect, res.Target, res.Attempts, res.Fallbacks, resp.RequestID)
	model := resp.Model
	if model == "" {
		_, model, _ = strings.Cut(res.Target, "/")
	}
	writeJSON(w, http.StatusOK, appendEmbeddings(nil, resp, model, in.base64))
}

// appendEmbeddings appends an OpenAI embeddings list: float arrays, or
// base64 of little-endian float32s as the SDKs decode them.
func appendEmbeddings(b []byte, resp *provider.EmbedResponse, model string, b64 bool) []byte {
	n := 0
	for _, v := range resp.Vectors {
		n += len(v)
	}
	if b == nil {
		b = make([]byte, 0, 128+12*n)
	}
	b = append(b, `{"object":"list","data":[`...)
	var raw []byte
	for i, v := range resp.Vectors {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"object":"embedding","index":`...)
		b = appendInt(b, i)
		b = append(b, `,"embedding":`...)
		if b64 {
			raw = raw[:0]
			for _, f := range v {
				raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(f))
			}
			b = append(b, '"')
			b = base64.StdEncoding.AppendEncode(b, raw)
			b = append(b, '"')
		} else {
			b = append(b, '[')
			for j, f := range v {
				if j > 0 {
					b = append(b, ',')
				}
				if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
					f = 0 // JSON has no NaN; a base64 upstream could send one
				}
				b = strconv.AppendFloat(b, float64(f), 'g', -1, 32)
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	b = append(b, `],"model":`...)
	b = json.AppendEscape(b, model, 0)
	b = append(b, `,"usage":{"prompt_tokens":`...)
	b = appendInt(b, resp.Usage.InputTokens)
	b = append(b, `,"total_tokens":`...)
	b = appendInt(b, resp.Usage.InputTokens)
	return append(b, `}}`...)
}
