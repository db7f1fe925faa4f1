package config

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

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

// unreported returns Validate's problems that are not at or under a field
// whose value the schema check already reported (and dropped).
func (w *walker) unreported(err error) []error {
	var out []error
	for _, e := range unjoin(err) {
		fe, ok := e.(*FieldError)
		if ok && w.under(fe.Path) {
			continue
		}
		out = append(out, e)
	}
	return out
}

func (w *walker) under(path string) bool {
	for _, b := range w.bad {
		if path == b || strings.HasPrefix(path, b+".") || strings.HasPrefix(path, b+"[") {
			return true
		}
	}
	return false
}

func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// joinInFileOrder joins errors sorted by line and column; errors without a
// position keep their order, last.
func joinInFileOrder(errs []error) error {
	sort.SliceStable(errs, func(i, j int) bool {
		a, _ := errs[i].(*FieldError)
		b, _ := errs[j].(*FieldError)
		if a == nil || b == nil {
			return a != nil && b == nil
		}
		if (a.Line == 0) != (b.Line == 0) {
			return a.Line != 0
		}
		return a.Line < b.Line || a.Line == b.Line && a.Column < b.Column
	})
	return errors.Join(errs...)
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
	tk := n.GetToken()
	w.record(tk, path)
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
		if tk.Type == token.StringType { // plain scalar: "${N}" may become a number
			out = reparse(exp, tk)
		} else {
			n.Value = exp
			tk.Value = exp
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

var typeErrRE = regexp.MustCompile(`cannot unmarshal (.+?) into Go (?:struct field \S+ of type |value of type )(\S+)$`)

// goWords are what must never reach a user from a decoder message.
var goWords = regexp.MustCompile(`interface \{\}|Go (struct|value)|unmarshal|u?int(8|16|32|64)\b|float(32|64)|time\.Duration|map\[|\[\]`)

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
		msg = fmt.Sprintf("expected %s, got %s", goTypeName(m[2]), gotName(m[1]))
	} else if m := shapeErrRE.FindStringSubmatch(msg); m != nil {
		msg = fmt.Sprintf("expected %s, got %s", yamlKindName(m[2]), yamlKindName(m[1]))
	}
	if goWords.MatchString(msg) {
		msg = "this value does not fit here (see docs/config.md for the key's type)"
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

// gotName names the Go type of a decoded value the way the file has it.
func gotName(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map"):
		return "a mapping"
	case t == "string":
		return "a string"
	case t == "bool":
		return "true or false"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"), strings.HasPrefix(t, "float"):
		return "a number"
	}
	return "a value of another kind"
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
