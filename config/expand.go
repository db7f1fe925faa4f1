package config

import (
	"bytes"
	"strings"
)

// Environment references are ${VAR} and ${VAR:-default}. YAML's flow
// collections treat "{" and "}" as syntax, so the issue's own example
// ({api_key: ${ANTHROPIC_API_KEY}}) is not valid YAML as written. Before
// parsing, markEnv rewrites every well-formed reference into a marked form
// (U+E000 NAME [U+E002 default] U+E001: private-use runes no config contains) that
// YAML reads as plain text; after parsing, expandEnv replaces the marked
// references inside string values. Malformed references stay as written.
const (
	envOpen  = "\uE000"
	envClose = "\uE001"
	envDef   = "\uE002" // stands for ":-", which flow YAML may read as a key
)

// markEnv rewrites well-formed ${...} references into the marked form.
func markEnv(data []byte) []byte {
	if !bytes.Contains(data, []byte("${")) {
		return data
	}
	var b bytes.Buffer
	b.Grow(len(data) + 16)
	for {
		i := bytes.Index(data, []byte("${"))
		if i < 0 {
			b.Write(data)
			return b.Bytes()
		}
		b.Write(data[:i])
		rest := data[i+2:]
		j := bytes.IndexByte(rest, '}')
		if j < 0 || !validRef(string(rest[:j])) {
			b.WriteString("${")
			data = rest
			continue
		}
		b.WriteString(envOpen)
		b.WriteString(strings.Replace(string(rest[:j]), ":-", envDef, 1))
		b.WriteString(envClose)
		data = rest[j+1:]
	}
}

// validRef reports whether expr (between "${" and "}") is NAME or NAME:-default
// with a default on one line.
func validRef(expr string) bool {
	name, def, _ := strings.Cut(expr, ":-")
	return validEnvName(name) && !strings.ContainsAny(def, "\n\r")
}

// expandEnv replaces marked references in s with values from getenv. An
// unset or empty VAR expands to its default ("" without one), as in the
// shell. unset collects the names of variables that were empty and had no
// default.
func expandEnv(s string, getenv func(string) string, unset *[]string) string {
	if !strings.Contains(s, envOpen) {
		return s
	}
	var b strings.Builder
	for {
		before, ref, found := strings.Cut(s, envOpen)
		b.WriteString(before)
		if !found {
			return b.String()
		}
		expr, rest, closed := strings.Cut(ref, envClose)
		if !closed { // cannot happen: markEnv writes both
			b.WriteString(ref)
			return b.String()
		}
		name, def, hasDef := strings.Cut(expr, envDef)
		v := ""
		if getenv != nil {
			v = getenv(name)
		}
		if v == "" {
			v = def
			if !hasDef && unset != nil {
				*unset = append(*unset, name)
			}
		}
		b.WriteString(v)
		s = rest
	}
}

// unmarkEnv turns marked references back into ${...} (for messages).
func unmarkEnv(s string) string {
	return strings.NewReplacer(envOpen, "${", envClose, "}", envDef, ":-").Replace(s)
}

func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// envRefs returns the variable names referenced in a marked string.
func envRefs(s string) []string {
	var names []string
	for {
		i := strings.Index(s, envOpen)
		if i < 0 {
			return names
		}
		s = s[i+len(envOpen):]
		j := strings.Index(s, envClose)
		if j < 0 {
			return names
		}
		name, _, _ := strings.Cut(s[:j], envDef)
		names = append(names, name)
		s = s[j+len(envClose):]
	}
}
