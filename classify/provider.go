package classify

import (
	"bytes"
	"net/http"
)

// Providers lists the provider names Classify and llmguard decode accept,
// "auto" last. The returned slice is a fresh copy.
func Providers() []string {
	return []string{"anthropic", "openai", "azure", "gemini", "vertex", "mistral", "deepseek", "groq",
		"openrouter", "xai", "together", "fireworks", "bedrock", "openai-compatible", "auto"}
}

// KnownProvider reports whether name is one of Providers() or "".
func KnownProvider(name string) bool {
	if name == "" {
		return true
	}
	for _, p := range Providers() {
		if p == name {
			return true
		}
	}
	return false
}

// ownEnvelope is the error envelope provider sends, for a body that
// carries more than one: Mistral's flat object, xAI's flat string, Bedrock's
// bare message. Every other provider's (and "auto"'s, and ""'s) is the
// default order, the nested {"error":{...}} first.
func ownEnvelope(provider string) envKind {
	switch provider {
	case "mistral":
		return envFlat
	case "xai":
		return envXAI
	case "bedrock":
		return envMessage
	}
	return envAny
}

// GuessProvider guesses which provider sent a response from its headers
// and body shape, for Input.Provider "auto". It returns "" when it cannot
// tell. It is safe for concurrent use.
func GuessProvider(h http.Header, body []byte) string {
	switch {
	case h.Get("X-Amzn-Errortype") != "" || h.Get("X-Amzn-Requestid") != "":
		return "bedrock"
	case h.Get("Request-Id") != "" || h.Get("Anthropic-Ratelimit-Requests-Limit") != "" ||
		h.Get("Anthropic-Organization-Id") != "":
		return "anthropic"
	case h.Get("Apim-Request-Id") != "" || h.Get("X-Ms-Region") != "" || h.Get("X-Ms-Client-Request-Id") != "":
		return "azure"
	case h.Get("X-Groq-Region") != "":
		return "groq"
	case h.Get("X-Generation-Id") != "":
		return "openrouter"
	case h.Get("Openai-Processing-Ms") != "" || h.Get("Openai-Organization") != "" ||
		(h.Get("X-Request-Id") != "" && h.Get("X-Ratelimit-Limit-Requests") != ""):
		return "openai"
	}
	if len(body) > maxBody {
		body = body[:maxBody]
	}
	t := bytes.TrimSpace(body)
	if len(t) == 0 || (t[0] != '{' && t[0] != '[') {
		return ""
	}
	rep := parseBody(t, envAny)
	switch rep.shape {
	case "problem":
		return ""
	case "":
		if len(rep.ids) > 0 {
			return "openai-compatible"
		}
		return ""
	}
	return rep.shape
}
