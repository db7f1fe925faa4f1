package provider_test

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmguard/llmguard/provider"
)

// TestTransport checks the shared client speaks HTTP/2 over TLS when the
// server offers it, keeps connections alive, and carries the timeouts.
func TestTransport(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Proto)
	}))
	srv.EnableHTTP2 = true
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	defer srv.Close()

	tr := provider.NewTransport(&provider.TransportConfig{DialTimeout: 3 * time.Second})
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	tr.TLSClientConfig = &tls.Config{RootCAs: pool}
	client := &http.Client{Transport: tr}
	for i := 0; i < 3; i++ {
		resp, err := client.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != "HTTP/2.0" {
			t.Errorf("request %d went over %s, want HTTP/2.0", i, body)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for 3 requests, want 1 (keep-alive)", n)
	}

	d := provider.NewTransport(nil)
	if !d.ForceAttemptHTTP2 || d.TLSHandshakeTimeout != 10*time.Second || d.ResponseHeaderTimeout != 10*time.Minute ||
		d.MaxIdleConnsPerHost != provider.DefaultIdleConnsPerHost || d.MaxIdleConns != 4*provider.DefaultIdleConnsPerHost || d.IdleConnTimeout != 90*time.Second || d.Proxy == nil {
		t.Errorf("defaults: %+v", d)
	}
	if c := provider.NewHTTPClient(nil); c.Timeout != 0 {
		t.Errorf("client Timeout = %v, want none (contexts bound calls)", c.Timeout)
	}
}
