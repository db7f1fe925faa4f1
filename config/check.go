package config

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// The schema check runs between the walk and the decoder. The decoder stops
// at the first mismatch and names Go types; the check compares the whole
// tree with the Config structs first and reports every mismatch and unknown
// key in the user's terms ("expected a whole number, got \"four\""). It
// drops what it reported, so the decoder sees only what fits and Validate
// can still report the rest of the file.

var (
	durationType = reflect.TypeFor[time.Duration]()
	targetType   = reflect.TypeFor[Target]()
)

// check compares n with the schema type t at path. It records each problem
// (w.errs, w.bad) and returns the node to decode in n's place: n, a
// normalised scalar (a duration "0" becomes "0s"), or nil to drop it.
func (w *walker) check(n ast.Node, t reflect.Type, path string) ast.Node {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch v := n.(type) {
	case nil:
		return nil
	case *ast.NullNode, *ast.AliasNode:
		return n // null is every type's zero; an alias is checked where its anchor is
	case *ast.AnchorNode:
		if v.Value = w.check(v.Value, t, path); v.Value == nil {
			return nil
		}
		return n
	case *ast.TagNode:
		if v.Value = w.check(v.Value, t, path); v.Value == nil {
			return nil
		}
		return n
	}
	switch {
	case t == durationType:
		return w.checkDuration(n, path)
	case t == targetType:
		if isScalar(n) {
			return n
		}
		if !isMapping(n) {
			return w.mismatch(n, path, "provider/model or a mapping with key target")
		}
		return w.checkMapping(n, t, path)
	}
	return w.checkKind(n, t, path)
}

// checkKind checks a value n (no tag, anchor or alias) against a schema
// type t by its kind, as check does.
func (w *walker) checkKind(n ast.Node, t reflect.Type, path string) ast.Node {
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		if !isMapping(n) {
			return w.mismatch(n, path, "a mapping (key: value)")
		}
		return w.checkMapping(n, t, path)
	case reflect.Slice:
		seq, ok := n.(*ast.SequenceNode)
		if !ok {
			return w.mismatch(n, path, "a list")
		}
		for i, e := range seq.Values {
			p := fmt.Sprintf("%s[%d]", path, i)
			if seq.Values[i] = w.check(e, t.Elem(), p); seq.Values[i] == nil {
				seq.Values[i] = ast.Null(token.New("null", "null", e.GetToken().Position))
			}
		}
		return n
	case reflect.String:
		if !isScalar(n) {
			return w.mismatch(n, path, "a string")
		}
		return n
	case reflect.Bool:
		if _, ok := n.(*ast.BoolNode); !ok {
			return w.mismatch(n, path, "true or false")
		}
		return n
	case reflect.Int, reflect.Int64:
		return w.checkInt(n, t.Bits(), path)
	case reflect.Float64:
		switch n.(type) {
		case *ast.IntegerNode, *ast.FloatNode:
			return n
		case *ast.StringNode:
			if f, err := strconv.ParseFloat(scalarText(n), 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
				return n
			}
		}
		return w.mismatch(n, path, "a number")
	}
	return n
}

// checkMapping checks each key of a mapping against the struct fields or
// the map's value type, dropping unknown keys and values that don't fit.
func (w *walker) checkMapping(n ast.Node, t reflect.Type, path string) ast.Node {
	if mv, ok := n.(*ast.MappingValueNode); ok { // a mapping of one pair
		if !w.checkPair(mv, t, path) {
			return nil
		}
		return n
	}
	m := n.(*ast.MappingNode)
	kept := m.Values[:0]
	for _, mv := range m.Values {
		if w.checkPair(mv, t, path) {
			kept = append(kept, mv)
		}
	}
	if t == targetType && len(kept) < len(m.Values) {
		// A misspelt key of a target most likely was "target": don't also
		// report the target as empty.
		w.bad = append(w.bad, path)
	}
	m.Values = kept
	return n
}

// checkPair checks one key: value of a mapping of type t; false drops it.
func (w *walker) checkPair(mv *ast.MappingValueNode, t reflect.Type, path string) bool {
	if _, ok := mv.Key.(*ast.MergeKeyNode); ok {
		return true // "<<: *anchor": the anchor is checked where it is
	}
	key := pairKey(mv)
	p := joinPath(path, key)
	vt := t
	if t.Kind() == reflect.Map {
		vt = t.Elem()
	} else {
		f, ok := fieldByKey(t, key)
		if !ok {
			w.errs = append(w.errs, w.fieldError(mv.Key.GetToken(), p, fmt.Sprintf("unknown key %q%s", key, suggestKey(p, key))))
			return false
		}
		vt = f.Type
	}
	if mv.Value = w.check(mv.Value, vt, p); mv.Value == nil {
		return false
	}
	return true
}

func pairKey(mv *ast.MappingValueNode) string {
	if s, ok := mv.Key.(*ast.StringNode); ok {
		return s.Value
	}
	if mv.Key == nil {
		return ""
	}
	return strings.TrimSpace(mv.Key.String())
}

func (w *walker) checkDuration(n ast.Node, path string) ast.Node {
	switch n.(type) {
	case *ast.StringNode:
		v := scalarText(n)
		if _, err := time.ParseDuration(v); err == nil {
			return n
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil && f == 0 {
			return reparse("0s", n.GetToken())
		}
		return w.problem(n, path, fmt.Sprintf("invalid duration %s (use a unit: 500ms, 60s, 5m)", strconv.Quote(w.writtenAt(n, path))))
	case *ast.IntegerNode, *ast.FloatNode:
		if f, err := strconv.ParseFloat(scalarText(n), 64); err == nil && f == 0 {
			return reparse("0s", n.GetToken())
		}
		return w.problem(n, path, fmt.Sprintf("duration %s needs a unit (500ms, 60s, 5m)", w.writtenAt(n, path)))
	}
	return w.mismatch(n, path, "a duration (500ms, 60s, 5m)")
}

func (w *walker) checkInt(n ast.Node, bits int, path string) ast.Node {
	text := scalarText(n)
	switch n.(type) {
	case *ast.IntegerNode, *ast.StringNode:
		_, err := strconv.ParseInt(text, 0, bits)
		if err == nil {
			return n
		}
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return w.problem(n, path, fmt.Sprintf("expected a whole number, got %s (out of range)", w.writtenAt(n, path)))
		}
	}
	switch n.(type) {
	case *ast.FloatNode, *ast.StringNode:
		if f, err := strconv.ParseFloat(text, 64); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return n // 1e3
		}
	}
	return w.mismatch(n, path, "a whole number")
}

// mismatch records "expected WANT, got WHAT" and drops the node.
func (w *walker) mismatch(n ast.Node, path, want string) ast.Node {
	return w.problem(n, path, "expected "+want+", got "+w.describe(n, path))
}

// problem records msg at n's position (with the unset variables behind
// the value, if any) and drops the node.
func (w *walker) problem(n ast.Node, path, msg string) ast.Node {
	if vars := w.unset[path]; len(vars) > 0 {
		msg += fmt.Sprintf(" (${%s} is not set)", vars[0])
	}
	w.errs = append(w.errs, w.fieldError(n.GetToken(), path, msg))
	w.bad = append(w.bad, path)
	return nil
}

// describe names a value the way the user wrote it: a list, a mapping, or
// the scalar as written (quoted when a string; ${VAR} references as in the
// file, never their expanded values), cut at 40 characters.
func (w *walker) describe(n ast.Node, path string) string {
	switch n.(type) {
	case *ast.SequenceNode:
		return "a list"
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.NullNode:
		return "null"
	}
	if _, ok := n.(*ast.StringNode); ok && (path == "providers" || strings.HasPrefix(path, "providers.")) {
		return "a string" // it may be a key pasted in the wrong place: never echoed
	}
	s := w.writtenAt(n, path)
	if utf8.RuneCountInString(s) > 40 {
		s = string([]rune(s)[:39]) + "…"
	}
	if _, ok := n.(*ast.StringNode); ok {
		if s == "" {
			return "an empty value"
		}
		return strconv.Quote(s)
	}
	return s
}

// writtenAt is a scalar's text as in the file: before ${VAR} expansion
// when it had any.
func (w *walker) writtenAt(n ast.Node, path string) string {
	if s, ok := w.written[path]; ok {
		return s
	}
	return scalarText(n)
}

func scalarText(n ast.Node) string {
	if s, ok := n.(*ast.StringNode); ok {
		return s.Value
	}
	if tok := n.GetToken(); tok != nil {
		return tok.Value
	}
	return ""
}

func isScalar(n ast.Node) bool {
	switch n.(type) {
	case *ast.StringNode, *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.LiteralNode, *ast.InfinityNode, *ast.NanNode:
		return true
	}
	return false
}

func isMapping(n ast.Node) bool {
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return true
	}
	return false
}
