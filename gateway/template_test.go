package gateway

import (
	"bytes"
	"testing"
)

// FuzzTextTemplate checks the events written from a text template against
// the same events encoded whole: byte for byte, whatever the text, the
// model and the id (an upstream's strings) hold.
func FuzzTextTemplate(f *testing.F) {
	f.Add("tok ", "gpt-4o", "chatcmpl-1", 0, "text_delta")
	f.Add("a\"b\\c\n\u00e9\x00llmguard-text\x00<&>\u2028", "m\x00llmguard-text\x00", "chatcmpl-\x00", 3, "input_json_delta")
	f.Add("\xff\xfe", "", "", 1, "thinking_delta")
	f.Fuzz(func(t *testing.T, text, model, id string, index int, kind string) {
		oa := &oaStream{id: "chatcmpl-x", created: 1}
		_ = oa.start(model, id, nil)
		var tmpl textTemplate
		tmpl.set(appendJSON(nil, oa.chunkOf(oaDelta{Content: &templateMark}, nil)))
		want := appendJSON(nil, oa.chunkOf(oaDelta{Content: &text}, nil))
		if got := tmpl.append(nil, text); !tmpl.ok || !bytes.Equal(got, want) {
			t.Fatalf("openai chunk from the template (ok %v):\n%s\nencoded:\n%s", tmpl.ok, got, want)
		}
		an := &anStream{}
		want = bytes.Clone(an.encodeDelta(index, kind, text))
		tmpl = textTemplate{}
		tmpl.set(an.encodeDelta(index, kind, templateMark))
		if !tmpl.ok {
			return // a kind with no text field: encoded whole
		}
		if got := tmpl.append(nil, text); !bytes.Equal(got, want) {
			t.Fatalf("anthropic delta from the template:\n%s\nencoded:\n%s", got, want)
		}
	})
}

// TestStreamTemplates checks that a stream's text events are written from
// templates, and as they would be encoded whole, through a change of block.
func TestStreamTemplates(t *testing.T) {
	var w recordEvents
	oa := &oaStream{w: &w, id: "chatcmpl-x", created: 1}
	an := &anStream{w: &w}
	_ = oa.start("gpt-4o", "", nil)
	for _, text := range []string{"a", "b\n", "c"} {
		_ = oa.textChunk(&text)
		_ = an.delta(0, "text_delta", text)
		_ = an.delta(1, "input_json_delta", text)
		want := [][]byte{appendJSON(nil, oa.chunkOf(oaDelta{Content: &text}, nil)),
			bytes.Clone(an.encodeDelta(0, "text_delta", text)), bytes.Clone(an.encodeDelta(1, "input_json_delta", text))}
		got := w.events[len(w.events)-3:]
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Errorf("%q event %d: %s, want %s", text, i, got[i], want[i])
			}
		}
	}
	if !oa.text.ok || !an.text.ok {
		t.Errorf("templates not made: openai %v, anthropic %v", oa.text.ok, an.text.ok)
	}
}

// recordEvents keeps the data of the events written.
type recordEvents struct{ events [][]byte }

func (r *recordEvents) Event(_ string, data []byte) error {
	r.events = append(r.events, bytes.Clone(data))
	return nil
}
