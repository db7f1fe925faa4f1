package mock

import (
	"net/http"
	"strings"
)

// route is where a request goes.
type route struct {
	dialect, provider, endpoint string
	model                       string // from the path (Gemini, Azure deployment)
	stream, sse                 bool   // Gemini: streamGenerateContent, alt=sse
	responses                   bool   // OpenAI's Responses API (/v1/responses)
	batch                       bool   // Gemini batchEmbedContents
}

func routeOf(r *http.Request) (route, bool) {
	p := r.URL.Path
	if r.Method == http.MethodGet {
		prefix, ok := strings.CutSuffix(p, "/models")
		if !ok {
			return route{}, false
		}
		rt := route{endpoint: endpointModels}
		switch prefix {
		case "/v1beta":
			rt.dialect, rt.provider = dialectGemini, dialectGemini
		case "/v1", "":
			rt.dialect, rt.provider = dialectOpenAI, dialectOpenAI
			if r.Header.Get("X-Api-Key") != "" || r.Header.Get("Anthropic-Version") != "" {
				rt.dialect, rt.provider = dialectAnthropic, dialectAnthropic
			}
		case "/openai":
			rt.dialect, rt.provider = dialectAzure, dialectAzure
		default:
			rt.dialect, rt.provider = dialectOpenAI, firstSegment(prefix)
		}
		return rt, true
	}
	if r.Method != http.MethodPost {
		return route{}, false
	}
	rt := route{endpoint: endpointGenerate}
	if prefix, ok := strings.CutSuffix(p, "/v1/messages"); ok {
		rt.dialect, rt.provider = dialectAnthropic, dialectAnthropic
		if prefix != "" {
			rt.provider = firstSegment(prefix)
		}
		return rt, true
	}
	for _, api := range [...]string{"/chat/completions", "/embeddings", "/responses"} {
		if prefix, ok := strings.CutSuffix(p, api); ok {
			openaiRoute(&rt, prefix)
			switch api {
			case "/embeddings":
				rt.endpoint = endpointEmbed
			case "/responses":
				rt.responses = true
			}
			return rt, true
		}
	}
	if rest, ok := strings.CutPrefix(p, "/v1beta/models/"); ok {
		i := strings.LastIndexByte(rest, ':')
		if i < 0 {
			return route{}, false
		}
		rt.dialect, rt.provider, rt.model = dialectGemini, dialectGemini, rest[:i]
		switch rest[i+1:] {
		case "generateContent":
		case "streamGenerateContent":
			rt.stream = true
			rt.sse = r.URL.Query().Get("alt") == "sse"
		case "embedContent", "batchEmbedContents":
			rt.endpoint = endpointEmbed
			rt.batch = rest[i+1:] == "batchEmbedContents"
		default:
			return route{}, false
		}
		return rt, true
	}
	return route{}, false
}

// openaiRoute sets the dialect and provider of an OpenAI-family path by its
// prefix: OpenAI (none or /v1), Azure (/openai/deployments/{d}) or the
// compatible provider named by its first segment.
func openaiRoute(rt *route, prefix string) {
	rt.dialect, rt.provider = dialectOpenAI, dialectOpenAI
	switch {
	case prefix == "" || prefix == "/v1":
	case strings.HasPrefix(prefix, "/openai/deployments/"):
		rt.dialect, rt.provider = dialectAzure, dialectAzure
		rt.model = strings.TrimPrefix(prefix, "/openai/deployments/")
	default:
		rt.provider = firstSegment(prefix)
	}
}

func firstSegment(p string) string {
	p = strings.TrimPrefix(p, "/")
	if i := strings.IndexByte(p, '/'); i >= 0 {
		p = p[:i]
	}
	return p
}

// apiKey returns the request's key by the dialect's convention.
func apiKey(r *http.Request, dialect string) string {
	h := r.Header
	switch dialect {
	case dialectAnthropic:
		if k := h.Get("X-Api-Key"); k != "" {
			return k
		}
	case dialectAzure:
		if k := h.Get("Api-Key"); k != "" {
			return k
		}
	case dialectGemini:
		if k := h.Get("X-Goog-Api-Key"); k != "" {
			return k
		}
		if k := r.URL.Query().Get("key"); k != "" {
			return k
		}
	}
	if a := h.Get("Authorization"); len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		return strings.TrimSpace(a[7:])
	}
	return ""
}

// last4 returns the last 4 characters of key, the only part of a key the
// mock ever logs or echoes.
func last4(key string) string {
	if len(key) <= 4 {
		return ""
	}
	return key[len(key)-4:]
}
