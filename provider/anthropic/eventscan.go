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
	cur   rawjson.Cursor
	e     wireEvent
	delta wireDelta
	// lastType and last are the last event and delta types read: mostly
	// the next ones too, read without allocating.
	lastType, last string
	// shape is the last event read whole around its delta's one string
	// (the field deltaKeys[at] names): the next, mostly the same but for
	// that string, reads with no walk.
	shape rawjson.Around
	at    int
	// texts counts the delta strings the scan read, the last between
	// offsets from and to.
	texts, from, to int
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
	if t, ok := s.shape.Match(data); ok {
		*s.deltaFields()[s.at] = t
		return &s.e, true
	}
	s.e, s.texts = wireEvent{}, 0
	c := &s.cur
	c.Reset(data)
	if c.Object() {
		for k := c.Field(eventKeys); k >= 0; k = c.Field(eventKeys) {
			switch e := &s.e; k {
			case 0:
				e.Type = c.Text(s.lastType)
				s.lastType = e.Type
			case 1:
				e.Index = c.Int()
			case 2:
				s.scanDelta()
			default:
				c.Fail() // message, content_block, usage: read once a stream
			}
		}
	}
	switch {
	case !c.Done():
		s.shape.Forget()
		return &s.e, false
	case s.texts == 1:
		s.shape.Keep(data, s.from, s.to)
	default:
		s.shape.Forget()
	}
	return &s.e, true
}

// scanDelta reads the delta object (null: none).
func (s *eventScan) scanDelta() {
	c := &s.cur
	if !c.Object() {
		return
	}
	s.delta = wireDelta{}
	s.e.Delta = &s.delta
	d, fields := &s.delta, s.deltaFields()
	for k := c.Field(deltaKeys); k >= 0; k = c.Field(deltaKeys) {
		if k == 0 {
			d.Type = c.Text(s.last)
			s.last = d.Type
			continue
		}
		s.texts, s.at, s.from = s.texts+1, k, c.Offset()
		*fields[k] = c.Text("")
		s.to = c.Offset()
	}
}

// deltaFields are the delta's fields, in the order of deltaKeys.
func (s *eventScan) deltaFields() [7]*string {
	d := &s.delta
	return [...]*string{&d.Type, &d.Text, &d.PartialJSON, &d.Thinking, &d.Signature, &d.StopReason, &d.StopSequence}
}
