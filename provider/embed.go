package provider

import "context"

// EmbedRequest is the canonical embeddings request: texts in, one vector
// each out.
type EmbedRequest struct {
	// Model is the provider's embedding model id (without "provider/").
	Model string `json:"model"`
	// Input holds the texts to embed, in order.
	Input []string `json:"input"`
	// Dimensions asks for vectors of this size (0 = the model's own). Only
	// models that can shorten their vectors take it (OpenAI text-embedding-3,
	// Gemini gemini-embedding-001); the engine sends it where it must.
	Dimensions int `json:"dimensions,omitempty"`
	// User is OpenAI's end-user id, sent where the API takes it ("" = none).
	User string `json:"user,omitempty"`
}

// EmbedResponse is the canonical embeddings answer.
type EmbedResponse struct {
	Provider string `json:"provider"`
	// Model is the model that answered.
	Model string `json:"model"`
	// Vectors holds one vector per input, in the input's order.
	Vectors [][]float32 `json:"vectors"`
	// Usage counts the input tokens (0 when the API does not say).
	Usage     Usage  `json:"usage"`
	RequestID string `json:"request_id,omitempty"`
}

// Embedder is implemented by adapters whose API embeds text. Like Chat,
// every non-success is a *Error carrying the classifier's verdict, and it
// never retries. Implementations are safe for concurrent use.
type Embedder interface {
	Embed(ctx context.Context, req *EmbedRequest) (*EmbedResponse, error)
}
