package classify_test

import (
	"net/http"
	"testing"

	"github.com/llmguard/llmguard/classify"
)

// A body that carries two envelopes is read by the one its provider
// sends: Input.Provider (and llmguard decode --provider) decides it.
func TestProviderDecidesAmbiguousEnvelope(t *testing.T) {
	// Mistral's flat error beside an OpenAI-style nested one (a proxy that
	// adds its own): on Mistral, code 3505 is its capacity error.
	both := `{"object":"error","message":"Service tier capacity exceeded for this model.","type":"service_tier_capacity_exceeded","code":"3505",` +
		`"error":{"message":"Rate limit exceeded","type":"rate_limit_exceeded","code":"rate_limit_exceeded"}}`
	bedrock := http.Header{"X-Amzn-Errortype": {"ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/"}}
	tests := []struct {
		provider, body string
		header         http.Header
		class          classify.Class
		ptype, message string
	}{
		{"mistral", both, nil, classify.Overloaded, "service_tier_capacity_exceeded",
			"429 service_tier_capacity_exceeded: Service tier capacity exceeded for this model."},
		{"openai", both, nil, classify.RateLimited, "rate_limit_exceeded", "429 rate_limit_exceeded: Rate limit exceeded"},
		{"auto", both, nil, classify.RateLimited, "rate_limit_exceeded", "429 rate_limit_exceeded: Rate limit exceeded"},
		{"", both, nil, classify.RateLimited, "rate_limit_exceeded", "429 rate_limit_exceeded: Rate limit exceeded"},
		// Bedrock's bare message beside a flat type: the kind is the header's.
		{"bedrock", `{"message":"Too many requests, please wait before trying again.","type":"invalid_request_error"}`, bedrock,
			classify.RateLimited, "ThrottlingException", "429 ThrottlingException: Too many requests, please wait before trying again."},
		{"auto", `{"message":"Too many requests, please wait before trying again.","type":"invalid_request_error"}`, bedrock,
			classify.RateLimited, "invalid_request_error", "429 invalid_request_error: Too many requests, please wait before trying again."},
		// One envelope: the name changes nothing.
		{"mistral", `{"error":{"message":"Rate limit exceeded","type":"rate_limit_exceeded"}}`, nil,
			classify.RateLimited, "rate_limit_exceeded", "429 rate_limit_exceeded: Rate limit exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			v := classify.Classify(classify.Input{Provider: tt.provider, Status: 429, Header: tt.header, Body: []byte(tt.body), Now: fixedNow})
			if v.Class != tt.class || v.ProviderType != tt.ptype || v.Message != tt.message {
				t.Errorf("got %s %q %q, want %s %q %q", v.Class, v.ProviderType, v.Message, tt.class, tt.ptype, tt.message)
			}
		})
	}
}

// ClassifyStreamError reads its provider argument as Input.Provider.
func TestStreamErrorProvider(t *testing.T) {
	data := []byte(`{"object":"error","message":"Service tier capacity exceeded for this model.","type":"service_tier_capacity_exceeded","code":"3505",` +
		`"error":{"message":"Rate limit exceeded","type":"rate_limit_exceeded"}}`)
	for provider, want := range map[string]classify.Class{"mistral": classify.Overloaded, "auto": classify.RateLimited} {
		v, ok := classify.ClassifyStreamError(provider, data, nil)
		if !ok || v.Class != want {
			t.Errorf("%s: got %s %v, want %s", provider, v.Class, ok, want)
		}
	}
}
