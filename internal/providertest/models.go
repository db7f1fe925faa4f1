package providertest

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/mock"
	"github.com/llmguard/llmguard/provider"
)

// Models checks an adapter's provider.ModelLister against the mock upstream
// (healthy, bad key, no key) and against a 2xx body that is not a list.
type Models struct {
	// New returns the lister talking to base with key.
	New func(base, key string) provider.ModelLister
	// BaseSuffix is appended to the server URL to make the base ("/v1" for
	// OpenAI, whose base URL includes the version).
	BaseSuffix string
	// Want is the mock's model list for this dialect.
	Want []string
	// Path is the path the upstream must see.
	Path string
	// KeyHeader is the header that carries the key.
	KeyHeader string
}

// Run runs the checks as subtests of t.
func (m Models) Run(t *testing.T) {
	badKey, _ := mock.Builtin("bad-key")
	tests := []struct {
		name      string
		scenario  *mock.Scenario
		key       string
		want      []string
		wantClass classify.Class
	}{
		{name: "healthy", key: "test-key-0123456789abcd", want: m.Want},
		{name: "bad key", scenario: badKey, key: "test-key-0123456789abcd", wantClass: classify.Auth},
		{name: "no key", key: "", wantClass: classify.Auth},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := mock.New(&mock.Config{Scenario: tt.scenario})
			srv := httptest.NewServer(up)
			defer srv.Close()
			got, err := m.New(srv.URL+m.BaseSuffix, tt.key).Models(context.Background())
			if tt.wantClass != "" {
				pe := provider.AsError(err)
				if pe == nil || pe.Verdict.Class != tt.wantClass {
					t.Fatalf("Models() err = %v, want a *provider.Error of class %s", err, tt.wantClass)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Models() (-want +got):\n%s", diff)
			}
			reqs := up.Requests()
			if len(reqs) != 1 || reqs[0].Method != "GET" || reqs[0].Path != m.Path || reqs[0].Endpoint != "models" {
				t.Errorf("upstream saw %+v, want one GET %s", reqs, m.Path)
			}
			if !strings.HasSuffix(reqs[0].Key, "abcd") {
				t.Errorf("key seen by the upstream = %q, want the adapter's key", reqs[0].Key)
			}
		})
	}
	// A 200 whose body is not a model list is a classified error, not an empty list.
	t.Run("not a list", func(t *testing.T) {
		up := NewUpstream(t, Reply(200, `{"object":"something"}`, "Content-Type", "application/json"))
		key := "k-0123456789abcdef"
		got, err := m.New(up.URL+m.BaseSuffix, key).Models(context.Background())
		if provider.AsError(err) == nil {
			t.Fatalf("Models() = %v, %v; want a *provider.Error", got, err)
		}
		if h := up.Last().Header.Get(m.KeyHeader); !strings.Contains(h, key) {
			t.Errorf("%s header = %q, want the key", m.KeyHeader, h)
		}
	})
}
