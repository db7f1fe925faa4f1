package config

import (
	"reflect"
	"strconv"
	"strings"
)

// keysAt returns the YAML keys valid at path (a field path such as
// "routes.default.targets[1].breaker"), or nil when path does not lead to a
// struct of the schema.
func keysAt(path string) []string {
	t := reflect.TypeFor[Config]()
	segs, ok := splitPath(path)
	if !ok {
		return nil
	}
	for _, seg := range segs {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch {
		case seg == "[]":
			if t.Kind() != reflect.Slice {
				return nil
			}
			t = t.Elem()
		case t.Kind() == reflect.Map:
			t = t.Elem()
		case t.Kind() == reflect.Struct:
			f, ok := fieldByKey(t, seg)
			if !ok {
				return nil
			}
			t = f.Type
		default:
			return nil
		}
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var keys []string
	for f := range t.Fields() {
		if tag := yamlTag(f); tag != "" {
			keys = append(keys, tag)
		}
	}
	return keys
}

func yamlTag(f reflect.StructField) string {
	tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if !f.IsExported() || tag == "-" {
		return ""
	}
	return tag
}

func fieldByKey(t reflect.Type, key string) (reflect.StructField, bool) {
	for f := range t.Fields() {
		if yamlTag(f) == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// splitPath splits "a.b[2].c" into "a", "b", "[]", "c". Map keys holding
// dots ("pricing.openai/gpt-4.1") make the result meaningless, which only
// costs the suggestion. ok is false for a malformed index.
func splitPath(path string) (segs []string, ok bool) {
	var out []string
	for _, part := range strings.Split(path, ".") {
		for {
			i := strings.IndexByte(part, '[')
			if i < 0 {
				break
			}
			if i > 0 {
				out = append(out, part[:i])
			}
			j := strings.IndexByte(part, ']')
			if j < i {
				return nil, false
			}
			if _, err := strconv.Atoi(part[i+1 : j]); err != nil {
				return nil, false
			}
			out = append(out, "[]")
			part = part[j+1:]
		}
		if part != "" {
			out = append(out, part)
		}
	}
	return out, true
}

// suggestKey says which known key an unknown one probably meant, or lists
// the valid keys: ` (did you mean "cooldown"?)` / ` (known: a, b, c)`.
func suggestKey(path, unknown string) string {
	keys := keysAt(parentPath(path))
	if len(keys) == 0 {
		return ""
	}
	best, bestD := "", 3
	for _, k := range keys {
		if d := editDistance(strings.ToLower(unknown), k); d < bestD {
			best, bestD = k, d
		}
	}
	if best != "" {
		return ` (did you mean "` + best + `"?)`
	}
	return " (known: " + strings.Join(keys, ", ") + ")"
}

// editDistance is the Levenshtein distance of a and b (short keys only).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
