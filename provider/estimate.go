package provider

// EstimateTokens estimates a request's input tokens without a tokenizer:
// four characters per token plus a few per message, rounded up; an image
// counts as about a megapixel's. Targets of one route do not share a
// tokenizer, so nothing closer holds for all of them. req must not be nil;
// a request whose deferred fields do not decode (see Full) is estimated
// from the length of its body.
func EstimateTokens(req *Request) int {
	full, err := req.Full()
	if err != nil {
		if req.Passthrough == nil {
			return 0
		}
		return (len(req.Passthrough.Body) + 3) / 4
	}
	req = full
	chars := len(req.System)
	for _, m := range req.Messages {
		chars += 16
		for _, p := range m.Content {
			chars += len(p.Text)
			if p.ToolCall != nil {
				chars += len(p.ToolCall.Name) + len(p.ToolCall.Arguments)
			}
			if p.ToolResult != nil {
				chars += len(p.ToolResult.Content)
			}
			if p.Image != nil {
				chars += 4 * 1600 // about a megapixel image
			}
		}
	}
	for _, t := range req.Tools {
		chars += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	return (chars + 3) / 4
}
