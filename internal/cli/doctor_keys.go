package cli

import (
	"fmt"
	"strings"

	"github.com/llmguard/llmguard/catalog"
	"github.com/llmguard/llmguard/provider/registry"
)

// This file: what doctor says of a key as pasted (whitespace, quotes, a
// prefix that is not its provider's).

// envKeyShapes checks the raw value of every known key variable, before
// the trimming config does: whitespace or quotes pasted in, a key that
// lacks its provider's usual prefix or has another provider's.
func envKeyShapes(getenv func(string) string) map[string][]finding {
	out := map[string][]finding{}
	for _, info := range catalog.KnownProviders() {
		for _, v := range info.KeyEnv {
			raw := getenv(v)
			if raw == "" {
				continue
			}
			out[v] = keyShape(info, v, raw)
		}
	}
	return out
}

// keyShape checks one key (what names it in messages: a variable or a field).
func keyShape(info catalog.Provider, what, raw string) []finding {
	var fs []finding
	key := raw
	if strings.TrimSpace(raw) != raw || strings.ContainsAny(raw, " \t\r\n") {
		fs = append(fs, finding{problem: true, text: what + " contains whitespace or a line break; paste the key again without it"})
		key = strings.TrimSpace(key)
	}
	if strings.ContainsAny(raw, "\"'`") {
		fs = append(fs, finding{problem: true, text: what + " contains quotes; set the bare key (the quotes became part of it)"})
		key = strings.Trim(key, "\"'`")
	}
	if strings.EqualFold(key, registry.NoKey) {
		return fs
	}
	// Another provider whose distinctive prefix the key has.
	own := 0
	if info.KeyPrefix != "" && strings.HasPrefix(key, info.KeyPrefix) {
		own = len(info.KeyPrefix)
	}
	var other string
	best := own
	for _, o := range catalog.KnownProviders() {
		if o.Name == info.Name || o.KeyPrefix == "" || !strings.HasPrefix(key, o.KeyPrefix) || len(o.KeyPrefix) <= best {
			continue
		}
		best, other = len(o.KeyPrefix), o.Name
	}
	switch {
	case other != "":
		fs = append(fs, finding{problem: true, text: fmt.Sprintf("%s looks like a key for %s (it starts with %s), not for %s: was it set in the wrong variable?",
			what, other, prefixOf(other), info.Name)})
	case info.KeyPrefix != "" && own == 0:
		fs = append(fs, finding{problem: info.Name == "anthropic", text: fmt.Sprintf("%s does not start with %s, as %s keys do", what, info.KeyPrefix, info.Name)})
	}
	return fs
}

// prefixOf is a provider's usual key prefix.
func prefixOf(name string) string {
	info, _ := catalog.KnownProvider(name)
	return info.KeyPrefix
}
