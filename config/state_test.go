package config

import (
	"strings"
	"testing"
	"time"
)

func TestState(t *testing.T) {
	env := func(k string) string {
		return map[string]string{"REDIS_URL": "redis://:s3cret-pass@127.0.0.1:6379/0"}[k]
	}
	for _, tc := range []struct {
		name, yaml string
		want       string // the error line, "" = valid
	}{
		{"default memory", "", ""},
		{"redis", "state: {backend: redis, redis_url: '${REDIS_URL}', timeout: 20ms}", ""},
		{"cluster seeds", "state: {backend: redis, redis_url: 'redis://127.0.0.1:7000?addr=127.0.0.1:7001'}", ""},
		{"unknown backend", "state: {backend: etcd}", `t.yaml:2:9: state.backend: must be memory or redis, not "etcd"`},
		{"no url", "state: {backend: redis}", `state.redis_url: missing: backend redis needs a redis:// or rediss:// URL (for example ${REDIS_URL})`},
		{"url without backend", "state: {redis_url: 'redis://127.0.0.1:6379'}", `state.redis_url: set, but state.backend is "memory" (set backend: redis to share state)`},
		{"bad scheme", "state: {backend: redis, redis_url: 'http://127.0.0.1:6379'}", `state.redis_url: invalid URL scheme: http`},
		{"bad url, password kept out", "state: {backend: redis, redis_url: 'redis://u:pw-secret@[::1'}", `state.redis_url: not a URL (want redis://host:port)`},
		{"negative timeout", "state: {backend: redis, redis_url: 'redis://h:1', timeout: -1s}", `state.timeout: must not be negative`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := "providers: {sim: {}}\n" + tc.yaml
			c, err := Parse("t.yaml", []byte(data), env)
			if err == nil {
				err = c.Validate()
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("error quotes the password: %v", err)
			}
		})
	}
	c, err := Parse("t.yaml", []byte("providers: {sim: {}}\nstate: {backend: redis, redis_url: '${REDIS_URL}'}"), env)
	if err != nil {
		t.Fatal(err)
	}
	if o := c.State.RedisOptions(); o == nil || o.Timeout != 50*time.Millisecond || o.URL != env("REDIS_URL") {
		t.Errorf("RedisOptions = %+v", o)
	}
	if got := c.Redacted().State.RedisURL; strings.Contains(got, "s3cret") {
		t.Errorf("Redacted keeps the password: %s", got)
	}
	found := false
	for _, s := range c.Secrets() {
		found = found || s == "s3cret-pass"
	}
	if !found {
		t.Error("Secrets does not list the Redis password")
	}
}
