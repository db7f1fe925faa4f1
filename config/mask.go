package config

import (
	"maps"
	"net/url"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/llmguard/llmguard/catalog"
)

// MaskKey returns a form of an API key safe to print: its known provider
// prefix, if any, and the last four characters ("sk-ant-…abcd", "…abcd"),
// never the whole key. Keys shorter than 16 characters print as "…" plus at
// most their last two. "" and "none" are returned as they are.
func MaskKey(key string) string {
	if key == "" || key == "none" {
		return key
	}
	r := []rune(key)
	if len(r) < 16 {
		tail := ""
		if len(r) >= 8 {
			tail = string(r[len(r)-2:])
		}
		return "…" + tail
	}
	prefix := 0
	for _, p := range catalog.KnownProviders() {
		if p.KeyPrefix != "" && strings.HasPrefix(key, p.KeyPrefix) && len([]rune(p.KeyPrefix)) > prefix {
			prefix = len([]rune(p.KeyPrefix))
		}
	}
	return string(r[:prefix]) + "…" + string(r[len(r)-4:])
}

// maskURL hides credentials in a URL: its user info, secret-looking query
// parameters, and
// for webhook URLs (which embed a token in the path) everything after the host.
func maskURL(s string, hidePath bool) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		if s == "" {
			return ""
		}
		return "…"
	}
	if hidePath && (u.Path != "" && u.Path != "/" || u.RawQuery != "") {
		return u.Scheme + "://" + u.Host + "/…"
	}
	user := u.User != nil
	u.User = nil
	u.RawQuery = maskQuery(u.RawQuery)
	out := u.String()
	if user {
		out = strings.Replace(out, "://", "://…@", 1)
	}
	return out
}

// MaskURL returns s with its credentials hidden (user info and secret-looking
// query parameters), for printing a base URL.
func MaskURL(s string) string { return maskURL(s, false) }

// Secrets lists every secret value the configuration holds: provider keys,
// the user info and secret-looking query values of base URLs, and the alert
// webhook URL with its path (Slack's token). Provision registers them with
// classify.AddSecrets, so Redact masks them wherever they appear.
func (c *Config) Secrets() []string {
	var out []string
	for _, p := range c.Providers {
		if p == nil {
			continue
		}
		if p.APIKey != "" && p.APIKey != "none" {
			out = append(out, p.APIKey)
		}
		out = append(out, urlSecrets(p.BaseURL, false)...)
	}
	out = append(out, urlSecrets(c.State.RedisURL, false)...)
	return append(out, urlSecrets(c.Alerts.WebhookURL, true)...)
}

// urlSecrets lists the secrets in a URL: its user name and password (raw
// and decoded), secret-looking query values, and with path the whole URL
// and its path.
func urlSecrets(s string, path bool) []string {
	u, err := url.Parse(s)
	if err != nil || s == "" {
		return nil
	}
	var out []string
	if u.User != nil {
		out = append(out, u.User.Username(), u.User.String())
		if pw, ok := u.User.Password(); ok {
			out = append(out, pw)
		}
	}
	for k, vs := range u.Query() {
		if secretParam(k) {
			out = append(out, vs...)
		}
	}
	if path && u.Path != "" && u.Path != "/" {
		out = append(out, s, u.EscapedPath())
	}
	return out
}

// secretParam reports whether a query parameter's name says it holds a secret.
func secretParam(k string) bool {
	lk := strings.ToLower(k)
	return strings.Contains(lk, "key") || strings.Contains(lk, "token") || strings.Contains(lk, "secret") ||
		strings.Contains(lk, "sig") || strings.Contains(lk, "pass")
}

func maskQuery(q string) string {
	if q == "" {
		return ""
	}
	vals, err := url.ParseQuery(q)
	if err != nil {
		return "…"
	}
	for k := range vals {
		if secretParam(k) {
			vals[k] = []string{"…"}
		}
	}
	return vals.Encode()
}

// Redacted returns a deep copy of the config that is safe to print or log:
// API keys masked with MaskKey, credentials removed from base URLs, and the
// alert webhook URL cut after its host. Safe for concurrent use.
func (c *Config) Redacted() *Config {
	out := *c
	out.Providers = make(map[string]*Provider, len(c.Providers))
	for name, p := range c.Providers {
		if p == nil {
			continue
		}
		cp := *p
		cp.APIKey = MaskKey(p.APIKey)
		cp.BaseURL = maskURL(p.BaseURL, false)
		out.Providers[name] = &cp
	}
	out.Routes = make(map[string]*Route, len(c.Routes))
	for name, r := range c.Routes {
		if r == nil {
			continue
		}
		cr := *r
		cr.Targets = append([]Target(nil), r.Targets...)
		cr.StaticFallback = maps.Clone(r.StaticFallback)
		out.Routes[name] = &cr
	}
	out.Pricing = maps.Clone(c.Pricing)
	out.Models = maps.Clone(c.Models)
	out.Alerts.WebhookURL = maskURL(c.Alerts.WebhookURL, true)
	out.State.RedisURL = maskURL(c.State.RedisURL, false)
	return &out
}

// EffectiveYAML renders the redacted configuration (see Redacted) as YAML:
// every key with its effective value, defaults included. It is what
// `llmguard config check` prints.
//
// Comments say where each key came from (# from ANTHROPIC_API_KEY, the
// provider's variable, or # from ${MY_KEY}, a reference in the file) and which
// providers were added from the environment because a route named them.
func (c *Config) EffectiveYAML() ([]byte, error) {
	cm := yaml.CommentMap{}
	for name, p := range c.Providers {
		if p == nil || strings.ContainsRune(name, '\'') {
			continue
		}
		at := "$.providers." + yamlPathKey(name)
		switch refs := c.envRefs["providers."+name+".api_key"]; {
		case p.keyVar != "":
			cm[at+".api_key"] = []*yaml.Comment{yaml.LineComment(" from " + p.keyVar)}
		case len(refs) > 0:
			cm[at+".api_key"] = []*yaml.Comment{yaml.LineComment(" from ${" + strings.Join(refs, "}, ${") + "}")}
		}
		if c.implicit[name] {
			cm[at+".type"] = []*yaml.Comment{yaml.LineComment(" not under providers in the file: configured from the environment")}
		}
	}
	return yaml.MarshalWithOptions(c.Redacted(), yaml.IndentSequence(true), yaml.WithComment(cm))
}

// yamlPathKey quotes a map key for a goccy YAML path when it needs it.
func yamlPathKey(k string) string {
	for _, r := range k {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return "'" + k + "'"
		}
	}
	return k
}
