package mock

import (
	"github.com/llmguard/llmguard/internal/sse"
	"github.com/segmentio/encoding/json"
)

// anthropicMessage builds a Messages API response.
func (x *reply) anthropicMessage(text string, tl *tool) []byte {
	b := make([]byte, 0, 512)
	b = append(b, `{"id":"`...)
	b = x.appendID(b, "msg_011CMock")
	b = append(b, `","type":"message","role":"assistant","model":`...)
	b = json.AppendEscape(b, x.chat.model, 0)
	b = append(b, `,"content":[`...)
	out := 0
	stop := "end_turn"
	if tl != nil {
		args := toolArgs(tl)
		b = append(b, `{"type":"tool_use","id":"`...)
		b = x.appendID(b, "toolu_011CMock")
		b = append(b, `","name":`...)
		b = json.AppendEscape(b, tl.name, 0)
		b = append(b, `,"input":`...)
		b = append(b, args...)
		b = append(b, '}')
		stop, out = "tool_use", len(args)/4+1
	} else {
		b = append(b, `{"type":"text","text":`...)
		b = json.AppendEscape(b, text, 0)
		b = append(b, '}')
		out = countTokens(text)
	}
	b = append(b, `],"stop_reason":"`...)
	b = append(b, stop...)
	b = append(b, `","stop_sequence":null,"usage":{"input_tokens":`...)
	b = appendInt(b, x.chat.inputTokens)
	b = append(b, `,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":`...)
	b = appendInt(b, out)
	b = append(b, `,"service_tier":"standard"}}`...)
	return b
}

// anthropic writes a Messages API stream: message_start,
// content_block_start, ping, content_block_delta…, content_block_stop,
// message_delta, message_stop.
func (s *streamer) anthropic(text string, tl *tool) {
	x := s.x
	x.start()
	s.sw = sse.NewWriter(x.w)
	b := make([]byte, 0, 512)
	b = append(b, `{"type":"message_start","message":{"id":"`...)
	b = x.appendID(b, "msg_011CMock")
	b = append(b, `","type":"message","role":"assistant","model":`...)
	b = json.AppendEscape(b, x.chat.model, 0)
	b = append(b, `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":`...)
	b = appendInt(b, x.chat.inputTokens)
	b = append(b, `,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1,"service_tier":"standard"}}}`...)
	s.sw.Event("message_start", b)

	var pieces []string
	stop := "end_turn"
	if tl != nil {
		args := string(toolArgs(tl))
		b = append(b[:0], `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"`...)
		b = x.appendID(b, "toolu_011CMock")
		b = append(b, `","name":`...)
		b = json.AppendEscape(b, tl.name, 0)
		b = append(b, `,"input":{}}}`...)
		s.sw.Event("content_block_start", b)
		pieces = []string{"", args[:len(args)/2], args[len(args)/2:]}
		stop = "tool_use"
	} else {
		s.sw.Event("content_block_start", []byte(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`))
		pieces = tokens(text)
	}
	s.sw.Event("ping", []byte(`{"type": "ping"}`))
	for _, p := range pieces {
		if !s.delta() {
			return
		}
		if tl != nil {
			b = append(b[:0], `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":`...)
		} else {
			b = append(b[:0], `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`...)
		}
		b = json.AppendEscape(b, p, 0)
		b = append(b, "}}"...)
		s.sw.Event("content_block_delta", b)
	}
	if !s.delta() {
		return
	}
	s.sw.Event("content_block_stop", []byte(`{"type":"content_block_stop","index":0}`))
	b = append(b[:0], `{"type":"message_delta","delta":{"stop_reason":"`...)
	b = append(b, stop...)
	b = append(b, `","stop_sequence":null},"usage":{"output_tokens":`...)
	b = appendInt(b, len(pieces))
	b = append(b, "}}"...)
	s.sw.Event("message_delta", b)
	s.sw.Event("message_stop", []byte(`{"type":"message_stop"}`))
}
