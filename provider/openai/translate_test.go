package openai

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	segjson "github.com/segmentio/encoding/json"

	pt "github.com/llmguard/llmguard/internal/providertest"
	"github.com/llmguard/llmguard/internal/rawjson"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/internal/httpcall"
)

// translated is translate's body joined, and its dropped names.
func translated(t *testing.T, req *provider.Request, q quirks) ([]byte, []string) {
	t.Helper()
	parts, dropped, err := translate(req, "gpt-4o", true, q)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Join(parts, nil), dropped
}

// libraryBody is the body the JSON library writes for req's wire request
// (what a request of another dialect was sent as before translate).
func libraryBody(t *testing.T, req *provider.Request, q quirks) ([]byte, []string) {
	t.Helper()
	var drops httpcall.Drops
	_, w, err := wire(req.Full, "gpt-4o", true, q, &drops)
	if err != nil {
		t.Fatal(err)
	}
	body, err := httpcall.Marshal(w, req)
	if err != nil {
		t.Fatal(err)
	}
	return body, drops.Names()
}

// leanOf is req with each text part's text, and each tool result's
// content, given as its JSON string in Part.Raw (as the gateway leaves
// them); html says whether the string escapes <, > and & as encoding/json
// does, or leaves them as a client may.
func leanOf(req *provider.Request, html bool) *provider.Request {
	c := *req
	c.Messages = slices.Clone(req.Messages)
	for i := range c.Messages {
		parts := slices.Clone(c.Messages[i].Content)
		for j := range parts {
			p := &parts[j]
			var flags segjson.AppendFlags
			if html {
				flags = segjson.EscapeHTML
			}
			switch {
			case p.Type == provider.PartText:
				raw := segjson.AppendEscape(nil, p.Text, flags)
				if rawjson.Verbatim(raw) {
					p.Text, p.Raw = "", raw
				}
			case p.Type == provider.PartToolResult && p.ToolResult != nil:
				raw := segjson.AppendEscape(nil, p.ToolResult.Content, flags)
				if rawjson.Verbatim(raw) {
					tr := *p.ToolResult
					tr.Content = ""
					p.ToolResult, p.Raw = &tr, raw
				}
			}
		}
		c.Messages[i].Content = parts
	}
	return &c
}

// checkTranslate: translate writes a request decoded whole byte for byte
// as the JSON library writes its wire request, and the same request with
// its texts left raw as JSON that says the same, naming the same drops.
func checkTranslate(t *testing.T, req *provider.Request) {
	t.Helper()
	for _, q := range []quirks{quirksFor("openai"), quirksFor("mistral")} {
		want, wantDropped := libraryBody(t, req, q)
		got, dropped := translated(t, req, q)
		if !bytes.Equal(got, want) || !slices.Equal(dropped, wantDropped) {
			t.Fatalf("translate:\n got %s %v\nwant %s %v", got, dropped, want, wantDropped)
		}
		for _, html := range []bool{true, false} {
			got, dropped := translated(t, leanOf(req, html), q)
			if !reflect.DeepEqual(pt.JSON(t, got), pt.JSON(t, want)) || !slices.Equal(dropped, wantDropped) {
				t.Fatalf("translate of raw texts:\n got %s %v\nwant %s %v", got, dropped, want, wantDropped)
			}
		}
	}
}

// conversation is a request from Anthropic's dialect with a, b and c in
// every place a text goes.
func conversation(a, b, c string) *provider.Request {
	text := func(s string) provider.Part { return provider.Part{Type: provider.PartText, Text: s} }
	return &provider.Request{Dialect: "anthropic", System: a, MaxTokens: 64, Messages: []provider.Message{
		{Role: provider.RoleUser, Content: []provider.Part{text(a)}},
		{Role: provider.RoleUser, Content: []provider.Part{text(a), text(b)}},
		{Role: provider.RoleAssistant, Content: []provider.Part{text(b), text(c)}},
		{Role: provider.RoleAssistant, Content: []provider.Part{text(c), {Type: provider.PartToolCall,
			ToolCall: &provider.ToolCall{ID: a, Name: "f", Arguments: json.RawMessage(`{"x":1}`)}}}},
		{Role: provider.RoleTool, Content: []provider.Part{{Type: provider.PartToolResult,
			ToolResult: &provider.ToolResult{CallID: a, Content: b}}, text(c)}},
		{Role: provider.RoleUser, Content: []provider.Part{text(b), {Type: provider.PartImage,
			Image: &provider.Image{URL: "https://x/" + c}}, {Type: "document", Extra: map[string]json.RawMessage{"x": json.RawMessage(`1`)}}}},
		{Role: provider.RoleSystem, Content: []provider.Part{text(c)}},
		{Role: "critic", Content: []provider.Part{text(a)}},
		{Role: provider.RoleUser},
		{Role: provider.RoleAssistant, Content: []provider.Part{{Type: provider.PartToolCall,
			ToolCall: &provider.ToolCall{ID: "c2", Name: b}}}, Extra: map[string]json.RawMessage{"name": json.RawMessage(`"n"`)}},
	}, Tools: []provider.Tool{{Name: "f", Description: c}}, Extra: map[string]json.RawMessage{"thinking": json.RawMessage(`{}`)}}
}

func TestTranslate(t *testing.T) {
	checkTranslate(t, pt.ToolConversation())
	checkTranslate(t, conversation("plain", "line\nbreak \"quoted\" <b>&</b> héllo \u2028 \xff", ""))
	checkTranslate(t, &provider.Request{Model: "m", Messages: []provider.Message{{Role: provider.RoleUser}}})
}

// FuzzTranslate is TestTranslate on any texts, valid UTF-8 as a decoder
// gives them (which replaces invalid bytes: two texts joined may
// otherwise make a rune of two halves).
func FuzzTranslate(f *testing.F) {
	f.Add("plain", "line\nbreak \"q\"", "<b>&</b> \u2028 \xff \U0001F600")
	f.Add("", "\\u00e9", "\x00\x1f")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		v := func(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }
		checkTranslate(t, conversation(v(a), v(b), v(c)))
	})
}
