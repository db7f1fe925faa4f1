package config

import (
	"fmt"
	"os"
	"reflect"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// position is a place in the source file (1-based).
type position struct{ line, col int }

// Load reads the YAML file at path, expands ${VAR} and ${VAR:-default} with
// getenv (nil = no variables), decodes it strictly (unknown keys are errors
// with file:line:column), applies defaults and the environment (see
// Provision) and validates it. Every problem found is returned, joined, each
// a *FieldError on one line.
func Load(path string, getenv func(string) string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	c, err := Parse(path, data, getenv)
	if err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// Parse is Load without reading a file or validating: name labels errors
// and becomes Source. It returns the provisioned config; call Validate
// before use (doctor uses Parse to report every problem at once).
func Parse(name string, data []byte, getenv func(string) string) (*Config, error) {
	w := &walker{name: name, getenv: getenv, byPos: map[position]string{}, byPath: map[string]position{}, unset: map[string][]string{},
		refs: map[string][]string{}, written: map[string]string{}}
	file, err := parseBytes(markEnv(data))
	if err != nil {
		return nil, w.yamlError(err)
	}
	c := &Config{}
	decoded := true // false: the decoder failed, so Validate would see a partial config
	switch {
	case len(file.Docs) > 1:
		return nil, &FieldError{File: name, Msg: "more than one YAML document"}
	case len(file.Docs) == 1 && file.Docs[0].Body != nil:
		body := w.walk(file.Docs[0].Body, "")
		switch body.(type) {
		case *ast.MappingNode, *ast.MappingValueNode:
			// Report every mismatch first, then decode what fits.
			if body = w.check(body, reflect.TypeFor[Config](), ""); body != nil {
				if err := decodeNode(body, c); err != nil {
					w.errs = append(w.errs, w.yamlError(err))
					decoded = false
				}
			}
		case *ast.NullNode:
		default:
			return nil, w.fieldError(body.GetToken(), "", "the configuration must be a mapping of keys (providers, routes, ...)")
		}
	}
	c.Source = name
	c.positions = w.byPath
	c.unsetVars = w.unset
	c.envRefs = w.refs
	if len(w.errs) == 0 {
		c.Provision(getenv)
		return c, nil
	}
	errs := w.errs
	if decoded {
		// The rest of the file can still be checked: Validate's problems,
		// except those at or under a field already reported.
		c.Provision(getenv)
		errs = append(errs, w.unreported(c.Validate())...)
	}
	return nil, joinInFileOrder(errs)
}

// parseBytes and decodeNode call goccy/go-yaml, turning a panic inside it
// (v1.19.2 panics on "targets: ! x": a non-specific tag where a list is
// expected; found by FuzzLoad) into an error.
func parseBytes(data []byte) (f *ast.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("malformed YAML (parser panic: %v)", r)
		}
	}()
	return parser.ParseBytes(data, 0)
}

func decodeNode(body ast.Node, c *Config) (err error) {
	defer func() {
		if r := recover(); r != nil {
			fe := &FieldError{Msg: "malformed YAML: a value has a shape or tag the schema cannot take (check tags like '!' and nesting)"}
			if tok := body.GetToken(); tok != nil && tok.Position != nil {
				fe.Line, fe.Column = tok.Position.Line, tok.Position.Column
			}
			err = fe
		}
	}()
	return yaml.NodeToValue(body, c, yaml.DisallowUnknownField())
}

// walker walks the YAML AST before decoding: it expands ${VAR}, checks
// durations, and records the field path of every node's position.
type walker struct {
	name   string
	getenv func(string) string
	byPos  map[position]string
	byPath map[string]position
	unset  map[string][]string
	refs   map[string][]string // every ${VAR} referenced, by field path
	// written holds, for each value that had ${VAR}s, its text as in the
	// file, so messages never show an expanded value.
	written map[string]string
	bad     []string // paths of values the schema check reported and dropped
	errs    []error
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (w *walker) record(tok *token.Token, path string) {
	if tok == nil || tok.Position == nil {
		return
	}
	p := position{tok.Position.Line, tok.Position.Column}
	if _, ok := w.byPos[p]; !ok {
		w.byPos[p] = path
	}
	if _, ok := w.byPath[path]; !ok && path != "" {
		w.byPath[path] = p
	}
}

func (w *walker) walk(n ast.Node, path string) ast.Node {
	switch n := n.(type) {
	case *ast.MappingNode:
		w.record(n.GetToken(), path)
		for _, mv := range n.Values {
			w.walkValue(mv, path)
		}
	case *ast.MappingValueNode:
		w.walkValue(n, path)
	case *ast.SequenceNode:
		w.record(n.GetToken(), path)
		for i, v := range n.Values {
			n.Values[i] = w.walk(v, fmt.Sprintf("%s[%d]", path, i))
		}
	case *ast.TagNode:
		w.record(n.GetToken(), path)
		switch tag := n.GetToken().Value; tag {
		case "!!str", "!!int", "!!float", "!!bool", "!!null", "!!map", "!!seq":
		default:
			w.errs = append(w.errs, w.fieldError(n.GetToken(), path, fmt.Sprintf("YAML tag %q is not supported in llmguard's config", tag)))
			w.bad = append(w.bad, path)
			return ast.Null(token.New("null", "null", n.GetToken().Position))
		}
		n.Value = w.walk(n.Value, path)
	case *ast.AnchorNode:
		w.record(n.GetToken(), path)
		n.Value = w.walk(n.Value, path)
	case *ast.StringNode:
		return w.scalar(n, path)
	default:
		if n != nil {
			w.record(n.GetToken(), path)
		}
	}
	return n
}

func (w *walker) walkValue(mv *ast.MappingValueNode, path string) {
	key := ""
	if mv.Key != nil {
		key = strings.TrimSpace(mv.Key.String())
		if s, ok := mv.Key.(*ast.StringNode); ok {
			key = s.Value
		}
	}
	p := joinPath(path, key)
	if mv.Key != nil {
		w.record(mv.Key.GetToken(), p)
	}
	mv.Value = w.walk(mv.Value, p)
}

// scalar expands ${VAR} in a string.
func (w *walker) scalar(n *ast.StringNode, path string) ast.Node {
	tok := n.GetToken()
	w.record(tok, path)
	var out ast.Node = n
	v := n.Value
	if strings.Contains(v, envOpen) {
		w.written[path] = unmarkEnv(v) // as in the file: messages never show expanded values
		var unset []string
		exp := expandEnv(v, w.getenv, &unset)
		if len(unset) > 0 {
			w.unset[path] = append(w.unset[path], unset...)
		}
		w.refs[path] = append(w.refs[path], envRefs(v)...)
		if tok.Type == token.StringType { // plain scalar: "${N}" may become a number
			out = reparse(exp, tok)
		} else {
			n.Value = exp
			tok.Value = exp
		}
	}
	return out
}

// reparse parses an expanded plain scalar so "${PORT}" can become a number,
// keeping the original position. Anything but a scalar stays a string.
func reparse(v string, orig *token.Token) ast.Node {
	if f, err := parser.ParseBytes([]byte(v), 0); err == nil && len(f.Docs) == 1 && f.Docs[0].Body != nil && !strings.ContainsAny(v, "\n#&*!|>'\"%@`[]{},") {
		switch n := f.Docs[0].Body.(type) {
		case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.NullNode, *ast.StringNode, *ast.InfinityNode, *ast.NanNode:
			n.GetToken().Position = orig.Position
			return n
		}
	}
	tok := token.New(v, v, orig.Position)
	tok.Type = token.DoubleQuoteType
	return ast.String(tok)
}
