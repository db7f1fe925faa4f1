// Package provider defines llmguard's canonical chat request, response and
// stream, the Adapter interface every LLM API adapter implements, the one
// typed error (*Error) that carries the classifier's verdict, and the one
// tuned HTTP transport the adapters share (NewHTTPClient).
//
// The adapters live in subpackages: provider/anthropic (Messages API),
// provider/openai (Chat Completions and the compatible family: deepseek,
// mistral, groq, openrouter, xai, together, fireworks, any
// openai-compatible server, and Azure OpenAI's URL and auth scheme) and
// provider/gemini (generateContent). provider/registry builds them from
// configuration. Adapters speak raw net/http so that every status, header
// and body reaches the classifier untouched, and they never retry.
//
// A tool-using conversation is canonical, so it survives a fallback from
// one provider to another: an assistant Message carries PartToolCall parts,
// the answer is a RoleTool Message of PartToolResult parts, and each adapter
// encodes them as its dialect wants (OpenAI tool_calls and "tool" messages,
// Anthropic tool_use and tool_result blocks, Gemini functionCall and
// functionResponse parts). Fields the canonical form lacks travel in
// Request.Extra and Part.Extra and are sent unchanged by the adapter whose
// dialect equals Request.Dialect.
//
// Every failure is a *Error: a non-2xx response (at most 64 KiB of its
// body is read and classified), a transport error, a 2xx body that does not
// parse, an error event inside a stream, or a stream that broke off. A
// Stream's Recv returns io.EOF only after the dialect's terminator, or at
// the end of a stream that delivered a finish reason and usage; a failed
// stream's *Error says whether it failed AfterFirstToken.
//
//	client := provider.NewHTTPClient(nil) // share it: one keep-alive pool per host
//	a := anthropic.New(&anthropic.Config{APIKey: key, Client: client})
//	resp, err := a.Chat(ctx, &provider.Request{Model: "claude-sonnet-4-5",
//		Messages: []provider.Message{{Role: provider.RoleUser,
//			Content: []provider.Part{{Type: provider.PartText, Text: "Hello"}}}}})
//	if pe := provider.AsError(err); pe != nil {
//		log.Println(pe.Verdict.Class, pe) // e.g. overloaded 529 overloaded_error: Overloaded (request-id req_…)
//	}
package provider
