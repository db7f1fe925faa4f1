package mock

// modelLists pre-encodes the GET …/models answer of each dialect.
func modelLists() map[string][]byte {
	openai := []byte(`{"object":"list","data":[` +
		`{"id":"gpt-4.1","object":"model","created":1744316542,"owned_by":"system"},` +
		`{"id":"gpt-4.1-mini","object":"model","created":1744318173,"owned_by":"system"},` +
		`{"id":"gpt-4o","object":"model","created":1715367049,"owned_by":"system"},` +
		`{"id":"gpt-4o-mini","object":"model","created":1721172741,"owned_by":"system"}]}`)
	return map[string][]byte{
		dialectAnthropic: []byte(`{"data":[` +
			`{"type":"model","id":"claude-sonnet-4-5","display_name":"Claude Sonnet 4.5","created_at":"2025-09-29T00:00:00Z"},` +
			`{"type":"model","id":"claude-haiku-4-5","display_name":"Claude Haiku 4.5","created_at":"2025-10-15T00:00:00Z"},` +
			`{"type":"model","id":"claude-opus-4-1","display_name":"Claude Opus 4.1","created_at":"2025-08-05T00:00:00Z"}],` +
			`"has_more":false,"first_id":"claude-sonnet-4-5","last_id":"claude-opus-4-1"}`),
		dialectOpenAI: openai,
		dialectAzure:  openai,
		dialectGemini: []byte(`{"models":[` +
			`{"name":"models/gemini-2.5-flash","version":"001","displayName":"Gemini 2.5 Flash","inputTokenLimit":1048576,"outputTokenLimit":65536,"supportedGenerationMethods":["generateContent","countTokens","streamGenerateContent"]},` +
			`{"name":"models/gemini-2.5-pro","version":"2.5","displayName":"Gemini 2.5 Pro","inputTokenLimit":1048576,"outputTokenLimit":65536,"supportedGenerationMethods":["generateContent","countTokens","streamGenerateContent"]}],` +
			`"nextPageToken":""}`),
	}
}
