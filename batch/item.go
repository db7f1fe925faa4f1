package batch

import (
	"bytes"
	"fmt"
	"strings"
	"text/template"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/internal/rawjson"
	"github.com/llmguard/llmguard/provider"
)

// DefaultTemplate renders an item's "text" when Config.Template is empty.
const DefaultTemplate = "Summarize the following text in five short bullet points. Answer with the bullet points only.\n\n{{.Text}}"

// TemplateData is what a prompt template sees of an item: {{.ID}},
// {{.Text}}, and every field of its line as {{.Fields.NAME}}.
type TemplateData struct {
	ID     string
	Text   string
	Fields map[string]any
}

// item is one line on its way through the run.
type item struct {
	entry
	idx       int // in Input.entries
	fallbacks []string
	req       *provider.Request
	// strikes counts failures for a passing reason while other items were
	// answered (see Config.ItemRetries).
	strikes int
	est     float64 // the cost estimate it holds in the budget
	probe   bool    // sent alone to see whether the targets are back
}

// ownLine is a line of llmguard's own format.
type ownLine struct {
	Text        *string         `json:"text"`
	Prompt      *string         `json:"prompt"`
	Messages    json.RawMessage `json:"messages"`
	System      string          `json:"system"`
	MaxTokens   int             `json:"max_tokens"`
	Temperature *float64        `json:"temperature"`
}

// openAILine is a line of the OpenAI Batch API's input.
type openAILine struct {
	Body json.RawMessage `json:"body"`
}

// anthropicLine is a line of the Anthropic Message Batches request format.
type anthropicLine struct {
	Params json.RawMessage `json:"params"`
}

// decode builds the item's request from its line; an error is the line's
// one-line fault (the item is then recorded as failed).
func (r *Runner) decode(it *item, b []byte) error {
	switch r.in.Format {
	case FormatOpenAI:
		var l openAILine
		if err := rawjson.Unmarshal(b, &l); err != nil {
			return fmt.Errorf("line %d: %v", it.line, err)
		}
		return r.decodeBody(it, dialectOpenAI, l.Body)
	case FormatAnthropic:
		var l anthropicLine
		if err := rawjson.Unmarshal(b, &l); err != nil {
			return fmt.Errorf("line %d: %v", it.line, err)
		}
		return r.decodeBody(it, dialectAnthropic, l.Params)
	}
	return r.decodeOwn(it, b)
}

// decodeBody decodes an API request body as the gateway does.
func (r *Runner) decodeBody(it *item, dialect string, body json.RawMessage) error {
	if len(body) == 0 || rawjson.IsNull(body) {
		what := "body"
		if dialect == dialectAnthropic {
			what = "params"
		}
		return fmt.Errorf("line %d: no %q", it.line, what)
	}
	req, _, fallbacks, err := r.cfg.Codec.DecodeChat(dialect, body)
	if err != nil {
		return fmt.Errorf("line %d: %v", it.line, err)
	}
	req.Stream = false // a batch collects whole answers
	it.req, it.fallbacks = req, fallbacks
	return nil
}

func (r *Runner) decodeOwn(it *item, b []byte) error {
	var l ownLine
	if err := rawjson.Unmarshal(b, &l); err != nil {
		return fmt.Errorf("line %d: %v", it.line, err)
	}
	req := &provider.Request{System: l.System, MaxTokens: l.MaxTokens, Temperature: l.Temperature}
	if req.MaxTokens <= 0 {
		req.MaxTokens = r.cfg.MaxTokens
	}
	switch {
	case l.Messages != nil:
		m, _, _, err := r.cfg.Codec.DecodeChat(dialectOpenAI, append(append([]byte(`{"model":"-","messages":`), l.Messages...), '}'))
		if err != nil {
			return fmt.Errorf("line %d: %v", it.line, err)
		}
		req.Messages = m.Messages
		if req.System == "" {
			req.System = m.System
		}
	case l.Prompt != nil:
		req.Messages = userText(*l.Prompt)
	case l.Text != nil:
		text, err := r.render(it, *l.Text, b)
		if err != nil {
			return fmt.Errorf("line %d: prompt template: %v", it.line, err)
		}
		req.Messages = userText(text)
	default:
		return fmt.Errorf("line %d: no \"text\", \"prompt\" or \"messages\"", it.line)
	}
	it.req = req
	return nil
}

// render runs the prompt template over an item's text.
func (r *Runner) render(it *item, text string, line []byte) (string, error) {
	d := TemplateData{ID: it.id, Text: text}
	if r.fields {
		if err := rawjson.Unmarshal(line, &d.Fields); err != nil {
			return "", err
		}
	}
	var b strings.Builder
	if err := r.tmpl.Execute(&b, &d); err != nil {
		return "", err
	}
	return b.String(), nil
}

func userText(s string) []provider.Message {
	return []provider.Message{{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: s}}}}
}

// parseTemplate parses a prompt template (the default when src is "").
func parseTemplate(src string) (*template.Template, bool, error) {
	if src == "" {
		src = DefaultTemplate
	}
	t, err := template.New("prompt").Option("missingkey=zero").Parse(src)
	if err != nil {
		return nil, false, err
	}
	// A dry run catches what parsing cannot (a field TemplateData lacks).
	var b bytes.Buffer
	if err := t.Execute(&b, &TemplateData{ID: "id", Text: "text", Fields: map[string]any{}}); err != nil {
		return nil, false, err
	}
	return t, strings.Contains(src, ".Fields"), nil
}
