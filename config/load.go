package config

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// position is a place in the source file (1-based).
type position struct{ line, col int }

// FieldError is one configuration problem: where it is (file, line, column
// when known) and which field (a path like "routes.default.targets[2]" or
// "providers.anthropic.api_key"). Its Error is one line and never contains a
// key. Load, Parse and Validate return these, joined with errors.Join; use
// errors.As to get the first one, or unwrap the join to list them all.
type FieldError struct {
	File         string
	Line, Column int // 0 when unknown
	Path         string
	Msg          string
}

// Error formats "file:line:col: path: msg", leaving out the parts that are unknown.
func (e *FieldError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
		}
		b.WriteString(": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

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

// durationKeys are the keys whose values are durations ("500ms", "60s").
var durationKeys = map[string]bool{
	"timeout": true, "base_delay": true, "max_delay": true, "max_wait": true,
	"first_token_timeout": true, "idle_timeout": true, "header_timeout": true,
	"window": true, "cooldown": true, "queue_timeout": true, "hedge_after": true, "ttl": true,
}

// Parse is Load without reading a file or validating: name labels errors
// and becomes Source. It returns the provisioned config; call Validate
// before use (doctor uses Parse to report every problem at once).
func Parse(name string, data []byte, getenv func(string) string) (*Config, error) {
	w := &walker{name: name, getenv: getenv, byPos: map[position]string{}, byPath: map[string]position{}, unset: map[string][]string{}, refs: map[string][]string{}}
	file, err := parseBytes(markEnv(data))
	if err != nil {
		return nil, w.yamlError(err)
	}
	c := &Config{}
	switch {
	case len(file.Docs) > 1:
		return nil, &FieldError{File: name, Msg: "more than one YAML document"}
	case len(file.Docs) == 1 && file.Docs[0].Body != nil:
		body := w.walk(file.Docs[0].Body, "")
		if len(w.errs) > 0 {
			return nil, errors.Join(w.errs...)
		}
		switch body.(type) {
		case *ast.MappingNode, *ast.MappingValueNode:
			if err := decodeNode(body, c); err != nil {
				return nil, w.yamlError(err)
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
	c.Provision(getenv)
	return c, nil
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
			if tk := body.GetToken(); tk != nil && tk.Position != nil {
				fe.Line, fe.Column = tk.Position.Line, tk.Position.Column
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
	errs   []error
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (w *walker) record(tk *token.Token, path string) {
	if tk == nil || tk.Position == nil {
		return
	}
	p := position{tk.Position.Line, tk.Position.Column}
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
			return n
		}
		n.Value = w.walk(n.Value, path)
	case *ast.AnchorNode:
		w.record(n.GetToken(), path)
		n.Value = w.walk(n.Value, path)
	case *ast.StringNode:
		return w.scalar(n, path)
	case *ast.IntegerNode:
		w.record(n.GetToken(), path)
		if durationKeys[lastKey(path)] {
			if n.GetToken().Value == "0" {
				return reparse("0s", n.GetToken())
			}
			w.errs = append(w.errs, w.fieldError(n.GetToken(), path, fmt.Sprintf("duration %s needs a unit (500ms, 60s, 5m)", n.GetToken().Value)))
		}
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

func lastKey(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[i+1:]
	}
	return path
}

// scalar expands ${VAR} in a string and checks duration values.
func (w *walker) scalar(n *ast.StringNode, path string) ast.Node {
	tk := n.GetToken()
	w.record(tk, path)
	var out ast.Node = n
	v := n.Value
	written := unmarkEnv(v) // as in the file: messages never show expanded values
	if strings.Contains(v, envOpen) {
		var unset []string
		exp := expandEnv(v, w.getenv, &unset)
		if len(unset) > 0 {
			w.unset[path] = append(w.unset[path], unset...)
		}
		w.refs[path] = append(w.refs[path], envRefs(v)...)
		v = exp
		if tk.Type == token.StringType { // plain scalar: "${N}" may become a number
			out = reparse(exp, tk)
		} else {
			n.Value = exp
			tk.Value = exp
		}
	}
	if durationKeys[lastKey(path)] {
		if _, err := time.ParseDuration(v); err != nil {
			if f, ferr := strconv.ParseFloat(v, 64); ferr == nil && f == 0 {
				return reparse("0s", tk)
			}
			w.errs = append(w.errs, w.fieldError(tk, path, fmt.Sprintf("invalid duration %q (use a unit: 500ms, 60s, 5m)", written)))
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
	tk := token.New(v, v, orig.Position)
	tk.Type = token.DoubleQuoteType
	return ast.String(tk)
}

func (w *walker) fieldError(tk *token.Token, path, msg string) *FieldError {
	e := &FieldError{File: w.name, Path: path, Msg: msg}
	if tk != nil && tk.Position != nil {
		e.Line, e.Column = tk.Position.Line, tk.Position.Column
	}
	return e
}

var typeErrRE = regexp.MustCompile(`cannot unmarshal (\S+) into Go (?:struct field |value of type ).*?(?:of type )?(\S+)$`)

// yamlError turns a goccy error into a one-line *FieldError with the path.
func (w *walker) yamlError(err error) error {
	if fe, ok := err.(*FieldError); ok {
		fe.File = w.name
		return fe
	}
	var ye yaml.Error
	if !errors.As(err, &ye) {
		return &FieldError{File: w.name, Msg: err.Error()}
	}
	msg := ye.GetMessage()
	var unknownKey string
	if k, ok := strings.CutPrefix(msg, "unknown field "); ok {
		unknownKey, _ = strconv.Unquote(k)
	}
	if m := typeErrRE.FindStringSubmatch(msg); m != nil {
		msg = fmt.Sprintf("expected %s, got %s", goTypeName(m[2]), m[1])
	} else if m := shapeErrRE.FindStringSubmatch(msg); m != nil {
		msg = fmt.Sprintf("expected %s, got %s", yamlKindName(m[2]), yamlKindName(m[1]))
	}
	msg = unmarkEnv(strings.ReplaceAll(msg, "unknown field", "unknown key"))
	tk := ye.GetToken()
	e := &FieldError{File: w.name, Msg: msg}
	if tk != nil && tk.Position != nil {
		e.Line, e.Column = tk.Position.Line, tk.Position.Column
		e.Path = w.byPos[position{e.Line, e.Column}]
		if unknownKey != "" {
			e.Msg += suggestKey(e.Path, unknownKey)
		}
		if vars := w.unset[e.Path]; len(vars) > 0 {
			e.Msg += fmt.Sprintf(" (${%s} is not set)", vars[0])
		}
	}
	return e
}

var shapeErrRE = regexp.MustCompile(`^(\w+) was used where (\w+) is expected$`)

func yamlKindName(k string) string {
	switch k {
	case "sequence":
		return "a list"
	case "mapping":
		return "a mapping"
	case "string":
		return "a string"
	case "int", "float":
		return "a number"
	case "bool":
		return "true or false"
	}
	return k
}

func goTypeName(t string) string {
	switch t {
	case "int", "int64", "uint64":
		return "an integer"
	case "float64":
		return "a number"
	case "bool":
		return "true or false"
	case "string":
		return "a string"
	case "time.Duration":
		return "a duration (500ms, 60s)"
	}
	switch {
	case strings.HasPrefix(t, "map"), strings.HasPrefix(t, "config."):
		return "a mapping"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	}
	return t
}
