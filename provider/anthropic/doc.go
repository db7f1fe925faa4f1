// Package anthropic is the provider.Adapter for the Anthropic Messages API
// ({base}/v1/messages, x-api-key, anthropic-version: 2023-06-01).
//
// Encoding: the system prompt goes in "system"; RoleTool messages and
// tool_result parts become tool_result blocks in a user turn; tool calls are
// tool_use blocks; consecutive turns of one role are merged; max_tokens,
// which the API requires, defaults to 4096; of Metadata only user_id is sent
// (the only key the API accepts); ToolChoice "required" is {"type":"any"}.
// Decoding maps stop_reason to the canonical finish reason and counts cache
// reads and writes into InputTokens. Thinking and redacted_thinking blocks
// go to Response.Thinking with their signature or data verbatim. Requests
// in the Anthropic dialect send their allow-listed headers (anthropic-beta)
// along; the key and version headers are always the adapter's.
//
// Streams: message_start gives id and model, content_block_start and
// content_block_delta give text and tool calls (input_json_delta fragments
// become ToolCallDelta.Arguments; thinking blocks, thinking_delta and
// signature_delta become Chunk.Thinking), message_delta gives the finish reason
// and usage, message_stop ends the stream; ping is ignored; an error event
// is a classified *provider.Error.
//
//	a := anthropic.New(&anthropic.Config{APIKey: os.Getenv("ANTHROPIC_API_KEY"), Client: client})
//	st, err := a.Stream(ctx, req)
package anthropic
