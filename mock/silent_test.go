package mock

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/internal/pipenet"
)

// TestSilent: a silent fault sends nothing for its N seconds (default 15),
// then drops the connection: the client gets a transport error, no status.
func TestSilent(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want time.Duration
	}{{"silent", 15 * time.Second}, {"silent:6", 6 * time.Second}} {
		for _, a := range apis {
			t.Run(tc.spec+"/"+a.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					srv := New(nil)
					ts := pipenet.NewServer(srv)
					defer ts.Close()
					start := time.Now()
					resp, err := ts.Client().Do(call{api: a.name, model: a.model, text: "hi", header: tc.spec}.request(ts.URL))
					if err == nil {
						resp.Body.Close()
						t.Fatalf("got status %d, want the connection dropped", resp.StatusCode)
					}
					if took := time.Since(start); took != tc.want {
						t.Errorf("dropped after %v, want %v", took, tc.want)
					}
					if r := srv.Requests(); len(r) != 1 || r[0].Status != 0 || r[0].Fault != tc.spec {
						t.Errorf("log %+v", r)
					}
				})
			})
		}
	}
}
