package mock

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/llmguard/llmguard/internal/rawjson"
)

// A strict, allocation-light JSON walker for the request fields the mock
// reads on every call. The fast parsers built on it give up (ok == false)
// on anything unusual (escapes in keys, keys that differ only in case,
// wrong types, invalid UTF-8), and the caller then uses encoding/json, so
// results never differ from it (FuzzFastParse checks this).
type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// rawString returns the bytes of the string token at s.i (without quotes)
// and whether it holds an escape.
func (s *scanner) rawString() (raw []byte, escaped, ok bool) {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false, false
	}
	start := s.i + 1
	for j := start; j < len(s.b); j++ {
		c := s.b[j]
		switch {
		case c == '"':
			s.i = j + 1
			return s.b[start:j], escaped, true
		case c == '\\':
			escaped = true
			j++
			if j >= len(s.b) {
				return nil, false, false
			}
			switch s.b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(s.b) {
					return nil, false, false
				}
				for k := j + 1; k <= j+4; k++ {
					if !isHex(s.b[k]) {
						return nil, false, false
					}
				}
				j += 4
			default:
				return nil, false, false
			}
		case c < 0x20:
			return nil, false, false
		}
	}
	return nil, false, false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// str reads a string value (or null, as "").
func (s *scanner) str() (string, bool) {
	s.ws()
	if s.lit("null") {
		return "", true
	}
	start := s.i
	raw, esc, ok := s.rawString()
	if !ok {
		return "", false
	}
	if esc {
		var v string
		if json.Unmarshal(s.b[start:s.i], &v) != nil {
			return "", false
		}
		return v, true
	}
	if !utf8.Valid(raw) {
		return "", false
	}
	return string(raw), true
}

// boolean reads true, false or null (false).
func (s *scanner) boolean() (bool, bool) {
	s.ws()
	switch {
	case s.lit("true"):
		return true, true
	case s.lit("false"), s.lit("null"):
		return false, true
	}
	return false, false
}

func (s *scanner) lit(l string) bool {
	if len(s.b)-s.i >= len(l) && string(s.b[s.i:s.i+len(l)]) == l {
		s.i += len(l)
		return true
	}
	return false
}

// object walks an object, calling field for each key with s positioned at
// the value; field must consume the value. null is an empty object.
func (s *scanner) object(field func(key []byte) bool) bool {
	s.ws()
	if s.lit("null") {
		return true
	}
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return false
	}
	s.i++
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return true
	}
	for {
		key, esc, ok := s.rawString()
		if !ok || esc {
			return false
		}
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		if !field(key) {
			return false
		}
		s.ws()
		if s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// array walks an array, calling elem with s positioned at each element.
// null is an empty array.
func (s *scanner) array(elem func() bool) bool {
	s.ws()
	if s.lit("null") {
		return true
	}
	if s.i >= len(s.b) || s.b[s.i] != '[' {
		return false
	}
	s.i++
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return true
	}
	for {
		if !elem() {
			return false
		}
		s.ws()
		if s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case ']':
			s.i++
			return true
		default:
			return false
		}
	}
}

// skip consumes any value, checking its syntax.
func (s *scanner) skip() bool {
	s.ws()
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		_, _, ok := s.rawString()
		return ok
	case c == '{':
		return s.object(func([]byte) bool { return s.skip() })
	case c == '[':
		return s.array(s.skip)
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	case c == '-' || '0' <= c && c <= '9':
		return s.number()
	}
	return false
}

// number consumes a JSON number (RFC 8259 grammar).
func (s *scanner) number() bool {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == d {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == d {
			return false
		}
	}
	s.i = i
	return true
}

// span consumes a value and returns its bytes (null gives nil).
func (s *scanner) span() ([]byte, bool) {
	s.ws()
	start := s.i
	if !s.skip() {
		return nil, false
	}
	if v := s.b[start:s.i]; string(v) != "null" {
		return v, true
	}
	return nil, true
}

// end reports whether only whitespace is left.
func (s *scanner) end() bool {
	s.ws()
	return s.i == len(s.b)
}

// foldsTo reports a key that encoding/json would match (case-insensitively)
// to one of names without being exactly one of them.
func foldsTo(key []byte, names ...string) bool {
	for _, n := range names {
		if string(key) != n && bytes.EqualFold(key, []byte(n)) {
			return true
		}
	}
	return false
}

// fastContent returns the text of a content value when it is a plain
// string; ok is false for anything else (arrays go to textOf).
func fastContent(raw []byte) (string, bool) {
	if len(raw) == 0 {
		return "", true
	}
	if raw[0] != '"' {
		return "", false
	}
	s := scanner{b: raw}
	return s.str()
}

// fastChat reads an OpenAI or Anthropic request (anthropic: the last user
// message; openai: the last message if it is a tool result, else the last
// user message). Tools and tool_choice, rare on hot paths, are decoded by
// the slow parser's code from their spans.
func fastChat(body []byte, anthropic bool) (*chat, bool) {
	s := scanner{b: body}
	c := &chat{inputTokens: estimateTokens(body)}
	var lastRole string
	var lastContent, userContent, tools, choice, opts []byte
	haveUser := false
	ok := s.object(func(k []byte) bool {
		var ok bool
		switch string(k) {
		case "model":
			c.model, ok = s.str()
		case "stream":
			c.stream, ok = s.boolean()
		case "messages":
			lastRole, lastContent, userContent, haveUser = "", nil, nil, false
			ok = s.array(func() bool {
				var role string
				var content []byte
				if !s.object(func(k []byte) bool {
					var ok bool
					switch string(k) {
					case "role":
						role, ok = s.str()
					case "content":
						content, ok = s.span()
					default:
						if foldsTo(k, "role", "content") {
							return false
						}
						ok = s.skip()
					}
					return ok
				}) {
					return false
				}
				lastRole, lastContent = role, content
				if role == "user" {
					userContent, haveUser = content, true
				}
				return true
			})
		case "tools":
			tools, ok = s.span()
		case "tool_choice":
			choice, ok = s.span()
		case "stream_options":
			opts, ok = s.span()
		default:
			if foldsTo(k, "model", "stream", "messages", "tools", "tool_choice", "stream_options") {
				return false
			}
			ok = s.skip()
		}
		return ok
	})
	if !ok || !s.end() || len(body) == 0 || body[firstNonSpace(body)] != '{' {
		return nil, false
	}
	if !anthropic && (lastRole == "tool" || lastRole == "function") {
		c.toolResult = true
		if c.text, ok = fastContent(lastContent); !ok {
			c.text, _ = textOf(lastContent)
		}
	} else if haveUser {
		if c.text, ok = fastContent(userContent); !ok {
			c.text, c.toolResult = textOf(userContent)
			if !anthropic {
				c.toolResult = false
			}
		}
	}
	if tools != nil || choice != nil || opts != nil {
		// The slow parser handles these fields; run it on just them.
		var b []byte
		b = append(b, `{"tools":`...)
		b = appendRaw(b, tools)
		b = append(b, `,"tool_choice":`...)
		b = appendRaw(b, choice)
		b = append(b, `,"stream_options":`...)
		b = appendRaw(b, opts)
		b = append(b, '}')
		var slow *chat
		var err error
		if anthropic {
			slow, err = parseAnthropic(b)
		} else {
			slow, err = parseOpenAI(b)
		}
		if err != nil {
			return nil, false
		}
		c.tools, c.force, c.noTools, c.includeUsage = slow.tools, slow.force, slow.noTools, slow.includeUsage
	}
	return c, true
}

func appendRaw(b, raw []byte) []byte {
	if raw == nil {
		return append(b, "null"...)
	}
	return append(b, raw...)
}

func firstNonSpace(b []byte) int {
	for i, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return i
		}
	}
	return 0
}

// fastGemini reads a generateContent request the way parseGemini does;
// function responses, tools and tool config go to the slow parser.
func fastGemini(body []byte, model string, stream bool) (*chat, bool) {
	s := scanner{b: body}
	c := &chat{model: model, stream: stream, inputTokens: estimateTokens(body)}
	var texts []string
	var rest []byte // tools and tool config, for the slow parser
	ok := s.object(func(k []byte) bool {
		switch string(k) {
		case "contents":
			texts = texts[:0]
			return s.array(func() bool {
				texts = texts[:0]
				return s.object(func(k []byte) bool {
					switch string(k) {
					case "parts":
						return s.array(func() bool {
							return s.object(func(k []byte) bool {
								switch string(k) {
								case "text":
									t, ok := s.str()
									if t != "" {
										texts = append(texts, t)
									}
									return ok
								case "functionResponse", "function_response":
									return false // the slow parser reads tool results
								}
								if foldsTo(k, "text", "functionResponse", "function_response") {
									return false
								}
								return s.skip()
							})
						})
					case "role":
						_, ok := s.str()
						return ok
					}
					if foldsTo(k, "parts", "role") {
						return false
					}
					return s.skip()
				})
			})
		case "tools", "toolConfig", "tool_config":
			v, ok := s.span()
			if v != nil {
				if rest == nil {
					rest = append(rest, '{')
				} else {
					rest = append(rest, ',')
				}
				rest = rawjson.AppendString(rest, string(k))
				rest = append(rest, ':')
				rest = append(rest, v...)
			}
			return ok
		}
		if foldsTo(k, "contents", "tools", "toolConfig", "tool_config") {
			return false
		}
		return s.skip()
	})
	if !ok || !s.end() || len(body) == 0 || body[firstNonSpace(body)] != '{' {
		return nil, false
	}
	c.text = strings.Join(texts, " ")
	if rest != nil {
		slow, err := parseGemini(append(rest, '}'), model, stream)
		if err != nil {
			return nil, false
		}
		c.tools, c.force, c.noTools = slow.tools, slow.force, slow.noTools
	}
	return c, true
}
