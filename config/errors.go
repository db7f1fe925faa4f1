package config

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/token"
)

// Configuration errors: one *FieldError per problem, each one line naming
// the field, joined in file order; the decoder's messages put in the
// user's terms.

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

func (w *walker) fieldError(tok *token.Token, path, msg string) *FieldError {
	e := &FieldError{File: w.name, Path: path, Msg: msg}
	if tok != nil && tok.Position != nil {
		e.Line, e.Column = tok.Position.Line, tok.Position.Column
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
	tok := ye.GetToken()
	e := &FieldError{File: w.name, Msg: msg}
	if tok != nil && tok.Position != nil {
		e.Line, e.Column = tok.Position.Line, tok.Position.Column
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
