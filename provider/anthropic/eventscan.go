package anthropic

import "github.com/llmguard/llmguard/internal/rawjson"

// This file reads the events that carry a stream's tokens
// (content_block_delta, and the content_block_stop, ping and message_stop
// around them) in one pass over their bytes, into the wireEvent
// rawjson.Unmarshal would decode: a stream's events are small and many,
// and decoding each through the library's reflection was most of what
// relaying a stream cost. Any other event, or an unusual shape (a field
// twice, a key in another case), is left to rawjson.Unmarshal, whose
// result and errors stand. FuzzScanEvent checks that both read the same.

// eventScan reads events into reused storage: what a scan returns is valid
// until the next scan.
type eventScan struct {
	e     wireEvent
	delta wireDelta
	last  string // the last delta type read
}

// wireDelta is wireEvent's delta.
type wireDelta struct {
	Type         string `json:"type"`
	Text         string `json:"text"`
	PartialJSON  string `json:"partial_json"`
	Thinking     string `json:"thinking"`
	Signature    string `json:"signature"`
	StopReason   string `json:"stop_reason"`
	StopSequence string `json:"stop_sequence"`
}

var (
	eventKeys = []string{"type", "index", "delta", "message", "content_block", "usage"}
	deltaKeys = []string{"type", "text", "partial_json", "thinking", "signature", "stop_reason", "stop_sequence"}
)

// scan reads data into a wireEvent; false leaves data to rawjson.Unmarshal
// (it may be invalid, unusual, or an event read once a stream).
func (s *eventScan) scan(data []byte) (*wireEvent, bool) {
	s.e = wireEvent{}
	ok := rawjson.ReadFields(data, true, eventKeys, func(k string, v []byte) (ok bool) {
		switch e := &s.e; k {
		case "type":
			e.Type, ok = rawjson.Text(v, eventType(v))
		case "index":
			var err error
			e.Index, err = rawjson.Int(v)
			ok = err == nil
		case "delta":
			ok = s.scanDelta(v)
		}
		return ok // false for message, content_block, usage: read once
	})
	return &s.e, ok
}

// eventType is the event type v spells when it is a common one, so that
// reading it allocates nothing.
func eventType(v []byte) string {
	switch string(v) {
	case `"content_block_delta"`:
		return "content_block_delta"
	case `"content_block_stop"`:
		return "content_block_stop"
	case `"ping"`:
		return "ping"
	case `"message_stop"`:
		return "message_stop"
	}
	return ""
}

// scanDelta reads the delta object (null: none).
func (s *eventScan) scanDelta(v []byte) bool {
	if rawjson.IsNull(v) {
		return true
	}
	s.delta = wireDelta{}
	s.e.Delta = &s.delta
	return rawjson.ReadFields(v, false, deltaKeys, func(k string, v []byte) (ok bool) {
		switch d := &s.delta; k {
		case "type":
			d.Type, ok = rawjson.Text(v, s.last)
			s.last = d.Type
		case "text":
			d.Text, ok = rawjson.Text(v, "")
		case "partial_json":
			d.PartialJSON, ok = rawjson.Text(v, "")
		case "thinking":
			d.Thinking, ok = rawjson.Text(v, "")
		case "signature":
			d.Signature, ok = rawjson.Text(v, "")
		case "stop_reason":
			d.StopReason, ok = rawjson.Text(v, "")
		case "stop_sequence":
			d.StopSequence, ok = rawjson.Text(v, "")
		}
		return ok
	})
}
