package provider

import "github.com/llmguard/llmguard/internal/rawjson"

// Lean is Full for an adapter that sends the texts of a conversation as
// their client wrote them: the request with every field decoded, except
// that a part's text may be left undecoded in Part.Raw (Text, or its
// ToolResult's Content, then ""). A request translated from the gateway's
// dialect to another is thus sent without its long texts ever being
// decoded and encoded again. Full decodes those texts. r itself when it
// has no Deferred. Safe for concurrent use, as reading r is.
func (r *Request) Lean() (*Request, error) { return r.with((*Deferred).decoded) }

// decodeTexts returns f with the texts its parts hold in Raw decoded (and
// Raw dropped): f itself when no part has Raw, else a copy sharing what it
// does not change.
func decodeTexts(f *Request) (*Request, error) {
	var msgs []Message
	for i := range f.Messages {
		m := &f.Messages[i]
		var parts []Part
		for j := range m.Content {
			p := &m.Content[j]
			if p.Raw == nil {
				continue
			}
			if parts == nil {
				parts = append([]Part(nil), m.Content...)
			}
			q := &parts[j]
			s, err := rawjson.String(p.Raw)
			if err != nil {
				return nil, err
			}
			if q.ToolResult != nil {
				tr := *q.ToolResult
				tr.Content = s
				q.ToolResult = &tr
			} else {
				q.Text = s
			}
			q.Raw = nil
		}
		if parts == nil {
			continue
		}
		if msgs == nil {
			msgs = append([]Message(nil), f.Messages...)
		}
		msgs[i].Content = parts
	}
	if msgs == nil {
		return f, nil
	}
	c := *f
	c.Messages = msgs
	return &c, nil
}
