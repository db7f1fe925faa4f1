// Package openai is the provider.Adapter for OpenAI Chat Completions
// ({base}/chat/completions, Bearer key, the base including /v1 as the SDKs
// take it) and the compatible family: deepseek, mistral, groq, openrouter,
// xai, together, fireworks and any openai-compatible server, selected by
// Config.Name, plus Azure OpenAI
// ({endpoint}/openai/deployments/{deployment}/chat/completions?api-version=,
// api-key header).
//
// Encoding: the system prompt is a "system" message; tool calls go in an
// assistant message's tool_calls with their arguments as a JSON string; each
// tool result is its own "tool" message, placed right after the assistant
// turn; a single text part is sent as a plain string. OpenAI itself gets
// max_completion_tokens (and metadata, from a request in its own dialect),
// the others max_tokens; streams ask for
// usage with stream_options.include_usage (except mistral, which sends
// usage unasked and rejects the option).
//
// Streams: each data: chunk gives text and tool_call deltas (by index), the
// finish reason and, last, usage; data: [DONE] ends the stream. A chunk with
// an "error" object or finish_reason "error" (OpenRouter) is a classified
// *provider.Error.
//
// Bodies are encoded and decoded by the project's JSON library
// (internal/rawjson says which and why), as encoding/json would.
//
//	a := openai.New(&openai.Config{Name: "groq", BaseURL: "https://api.groq.com/openai/v1",
//		APIKey: os.Getenv("GROQ_API_KEY"), Client: client})
//	resp, err := a.Chat(ctx, req)
package openai
