package provider

import "context"

// ModelLister is implemented by adapters that can list the models their key
// may use. The call is cheap and authenticated, so `llmguard doctor` uses it
// to check a key without spending tokens. Like Chat, every non-success is a
// *Error carrying the classifier's verdict. Implementations are safe for
// concurrent use.
type ModelLister interface {
	// Models returns the model ids the provider lists for the key, in the
	// provider's order (Gemini's "models/" prefix removed).
	Models(ctx context.Context) ([]string, error)
}
