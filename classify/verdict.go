package classify

import (
	"encoding/json"
	"net/http"
	"time"
)

// Class names what kind of failure a response or transport error is.
// The string values are a contract (decode --json, MCP, gateway, config).
type Class string

// The failure classes.
const (
	RateLimited           Class = "rate_limited"
	Overloaded            Class = "overloaded"
	ServerError           Class = "server_error"
	Timeout               Class = "timeout"
	Network               Class = "network"
	QuotaExhausted        Class = "quota_exhausted"
	Auth                  Class = "auth"
	Permission            Class = "permission"
	NotFound              Class = "not_found"
	InvalidRequest        Class = "invalid_request"
	ContextLengthExceeded Class = "context_length_exceeded"
	RequestTooLarge       Class = "request_too_large"
	ContentFiltered       Class = "content_filtered"
	Unknown               Class = "unknown"
)

// Scope says what a failure shows to be broken; circuit breakers key on it.
type Scope string

// The failure scopes.
const (
	// ScopeRequest: this request is at fault; the target is healthy.
	ScopeRequest Scope = "request"
	// ScopeModel: the model (target) is unhealthy or busy.
	ScopeModel Scope = "model"
	// ScopeKey: the API key (account) is unusable for every model it serves.
	ScopeKey Scope = "key"
	// ScopeProvider: the whole provider is unreachable.
	ScopeProvider Scope = "provider"
)

// Verdict is the classifier's decision about one failure. The zero value is
// not a valid verdict; Classify always sets Class and Scope.
type Verdict struct {
	// Status is the HTTP status the verdict came from, 0 for a transport error.
	Status int
	// Class is the kind of failure.
	Class Class
	// Retryable reports whether the same request to the same target may succeed later.
	Retryable bool
	// Wait is the delay the server asked for; 0 when it asked for none.
	Wait time.Duration
	// Until is when a key-wide quota resets, where knowable; zero otherwise.
	Until time.Time
	// Scope is what the failure says is broken.
	Scope Scope
	// Fallback reports whether another model or provider could serve the same request.
	Fallback bool
	// ProviderType is the provider's own error type, code or status string.
	ProviderType string
	// RequestID is the provider's request id, if any.
	RequestID string
	// Message is one redacted line of at most MaxLine bytes (the
	// provider's message in full below that), e.g.
	// "529 overloaded_error: Overloaded (request-id req_011CU…)".
	Message string
}

// Input is everything the classifier looks at. The zero Input classifies
// as Unknown. Classify does not modify or retain an Input.
type Input struct {
	// Provider names who answered: a name from Providers, or "" or "auto"
	// when unknown. It decides a body that carries more than one error
	// envelope: "mistral" reads Mistral's flat {"object":"error",...} before
	// a nested {"error":{...}}, "xai" its flat string error, "bedrock" the
	// bare {"message":...}; every other name, "" and "auto" read the nested
	// envelope first. A body with one envelope reads the same under any name.
	Provider string
	// Status is the HTTP status; 0 when no response came (see Err).
	Status int
	Header http.Header
	// Body is the response body (JSON, SSE, HTML, text, empty or truncated).
	// Only the first 64 KiB are parsed.
	Body []byte
	// Err is the transport error when no response (or no complete body) came.
	Err error
	// Now is the reference time for HTTP-dates and reset timestamps; zero means time.Now().
	Now time.Time
}

// verdictJSON is the wire form of a Verdict; its keys are a contract
// (llmguard decode --json, the MCP decode_error tool).
type verdictJSON struct {
	Class        Class    `json:"class"`
	Retryable    bool     `json:"retryable"`
	WaitSeconds  *float64 `json:"wait_seconds"`
	Until        *string  `json:"until"`
	Scope        Scope    `json:"scope"`
	Fallback     bool     `json:"fallback"`
	ProviderType string   `json:"provider_type"`
	RequestID    string   `json:"request_id"`
	Message      string   `json:"message"`
}

// MarshalJSON encodes v with exactly the keys class, retryable, wait_seconds
// (number or null), until (RFC 3339 or null), scope, fallback, provider_type,
// request_id and message.
func (v Verdict) MarshalJSON() ([]byte, error) {
	j := verdictJSON{Class: v.Class, Retryable: v.Retryable, Scope: v.Scope, Fallback: v.Fallback,
		ProviderType: v.ProviderType, RequestID: v.RequestID, Message: v.Message}
	if v.Wait > 0 {
		s := v.Wait.Seconds()
		j.WaitSeconds = &s
	}
	if !v.Until.IsZero() {
		s := v.Until.UTC().Format(time.RFC3339)
		j.Until = &s
	}
	return json.Marshal(j)
}
