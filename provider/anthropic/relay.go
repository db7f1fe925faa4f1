package anthropic

import (
	"strings"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/internal/rawjson"
	"github.com/llmguard/llmguard/provider/internal/httpcall"
)

// messageLog rebuilds, from the events of a relayed request's stream, the
// Message the API returns to the same request without streaming (as the
// SDKs' finalMessage does): message_start's message with its content
// blocks (each content_block_start's block with its deltas applied), then
// message_delta's fields and usage. Every field the events carry is kept
// as sent; a delta type it does not know is the only thing lost.
type messageLog struct {
	message json.RawMessage
	blocks  []*blockLog
	delta   json.RawMessage // message_delta.delta
	usage   json.RawMessage // message_delta.usage
	done    bool            // message_delta seen
}

// maxBlocks bounds the content blocks a log keeps.
const maxBlocks = 4096

type blockLog struct {
	index     int
	start     json.RawMessage
	acc       [deltaKinds]strings.Builder // the deltas of each kind, joined
	has       [deltaKinds]bool            // a delta of that kind seen
	citations []json.RawMessage
}

// The kinds of delta a content block joins, by index in blockLog.acc.
const (
	textDelta = iota
	thinkingDelta
	signatureDelta
	inputDelta
	deltaKinds
)

// deltaKind is the kind of a content_block_delta's type (false: not one
// a block joins).
func deltaKind(typ string) (int, bool) {
	switch typ {
	case "text_delta":
		return textDelta, true
	case "thinking_delta":
		return thinkingDelta, true
	case "signature_delta":
		return signatureDelta, true
	case "input_json_delta":
		return inputDelta, true
	}
	return 0, false
}

// add records one event's data.
func (l *messageLog) add(data []byte) {
	var e struct {
		Type         string          `json:"type"`
		Index        int             `json:"index"`
		Message      json.RawMessage `json:"message"`
		ContentBlock json.RawMessage `json:"content_block"`
		Delta        json.RawMessage `json:"delta"`
		Usage        json.RawMessage `json:"usage"`
	}
	if rawjson.Unmarshal(data, &e) != nil {
		return
	}
	switch e.Type {
	case "message_start":
		l.message = e.Message
	case "content_block_start":
		if b := l.block(e.Index); b != nil {
			b.start = e.ContentBlock
		}
	case "content_block_delta":
		var d struct {
			Type        string          `json:"type"`
			Text        string          `json:"text"`
			PartialJSON string          `json:"partial_json"`
			Thinking    string          `json:"thinking"`
			Signature   string          `json:"signature"`
			Citation    json.RawMessage `json:"citation"`
		}
		b := l.block(e.Index)
		if b == nil || rawjson.Unmarshal(e.Delta, &d) != nil {
			return
		}
		if k, ok := deltaKind(d.Type); ok {
			b.acc[k].WriteString([deltaKinds]string{d.Text, d.Thinking, d.Signature, d.PartialJSON}[k])
			b.has[k] = true
		} else if d.Type == "citations_delta" && len(d.Citation) > 0 {
			b.citations = append(b.citations, d.Citation)
		}
	case "message_delta":
		l.delta, l.usage, l.done = e.Delta, e.Usage, true
	}
}

func (l *messageLog) block(index int) *blockLog {
	return httpcall.Indexed(&l.blocks, index, maxBlocks, func(b *blockLog) int { return b.index },
		func(i int) *blockLog { return &blockLog{index: i} })
}

// RawAnswer implements provider.RawAnswerer: the rebuilt Message, once
// message_delta (the finish reason) has come; nil before, or when the
// events do not make one.
func (l *messageLog) RawAnswer() json.RawMessage {
	if l == nil || !l.done || len(l.message) == 0 {
		return nil
	}
	content := []byte{'['}
	for i, b := range l.blocks {
		if i > 0 {
			content = append(content, ',')
		}
		raw, err := b.build()
		if err != nil {
			return nil
		}
		content = append(content, raw...)
	}
	content = append(content, ']')
	fields := []rawjson.Field{{Key: "content", Value: content}}
	_ = rawjson.EachField(l.delta, func(k, v []byte) error {
		fields = append(fields, rawjson.Field{Key: string(k), Value: v})
		return nil
	})
	if len(l.usage) > 0 {
		var start []byte
		_ = rawjson.EachField(l.message, func(k, v []byte) error {
			if string(k) == "usage" {
				start = v
			}
			return nil
		})
		usage, err := overlay(start, l.usage)
		if err != nil {
			return nil
		}
		fields = append(fields, rawjson.Field{Key: "usage", Value: usage})
	}
	out, err := rawjson.Splice(nil, l.message, fields)
	if err != nil {
		return nil
	}
	return out
}

// overlay is object base with every field of top set (base may be empty).
func overlay(base, top []byte) ([]byte, error) {
	if len(base) == 0 || rawjson.IsNull(base) {
		return top, nil
	}
	var fields []rawjson.Field
	err := rawjson.EachField(top, func(k, v []byte) error {
		fields = append(fields, rawjson.Field{Key: string(k), Value: v})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rawjson.Splice(nil, base, fields)
}

// build is the block with its deltas applied.
func (b *blockLog) build() ([]byte, error) {
	if len(b.start) == 0 {
		return nil, errNotMessage
	}
	var start struct {
		Text      string            `json:"text"`
		Thinking  string            `json:"thinking"`
		Citations []json.RawMessage `json:"citations"`
	}
	if err := rawjson.Unmarshal(b.start, &start); err != nil {
		return nil, err
	}
	var fields []rawjson.Field
	str := func(key, prefix string, acc *strings.Builder) {
		fields = append(fields, rawjson.Field{Key: key, Value: json.AppendEscape(nil, prefix+acc.String(), 0)})
	}
	if b.has[textDelta] {
		str("text", start.Text, &b.acc[textDelta])
	}
	if b.has[thinkingDelta] {
		str("thinking", start.Thinking, &b.acc[thinkingDelta])
	}
	if b.has[signatureDelta] {
		str("signature", "", &b.acc[signatureDelta])
	}
	if in := strings.TrimSpace(b.acc[inputDelta].String()); b.has[inputDelta] && in != "" && rawjson.Valid([]byte(in)) {
		fields = append(fields, rawjson.Field{Key: "input", Value: []byte(in)})
	}
	if len(b.citations) > 0 {
		all := append(start.Citations, b.citations...)
		v, err := json.Marshal(all)
		if err != nil {
			return nil, err
		}
		fields = append(fields, rawjson.Field{Key: "citations", Value: v})
	}
	return rawjson.Splice(nil, b.start, fields)
}
