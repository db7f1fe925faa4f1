// Package gemini is the provider.Adapter for the Gemini API
// ({base}/v1beta/models/{model}:generateContent and
// :streamGenerateContent?alt=sse, x-goog-api-key).
//
// Encoding: the system prompt is systemInstruction; assistant turns have
// role "model"; tool calls are functionCall parts and tool results
// functionResponse parts, named after the call they answer (OpenAI-style
// results carry only the call id); tool schemas are sent as
// parametersJsonSchema, which takes JSON Schema as is. Decoding skips
// thought parts, counts thinking tokens as output, gives function calls
// ids "call_0", "call_1"... when Gemini sends none, and reports STOP with
// function calls as the tool_calls finish reason. A call's thoughtSignature
// is kept in ToolCall.Extra and sent back with it; Gemini 3 models get
// SkipSignature for calls that have none (e.g. made by another provider
// before a fallback). A prompt block
// (promptFeedback.blockReason without candidates) is a classified
// *provider.Error (content_filtered).
//
// Streams have no terminator: the last event carries finishReason and
// usageMetadata and the stream ends, which Recv reports as io.EOF.
//
//	a := gemini.New(&gemini.Config{APIKey: os.Getenv("GEMINI_API_KEY"), Client: client})
//	resp, err := a.Chat(ctx, req)
package gemini
