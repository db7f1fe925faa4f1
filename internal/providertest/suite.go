package providertest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/internal/pipenet"
	"github.com/llmguard/llmguard/provider"
)

// ErrorCase is an upstream failure and the class it must surface as.
type ErrorCase struct {
	Name   string
	Status int
	// Header lists name, value pairs.
	Header []string
	Body   string
	Want   classify.Class
}

// Suite runs the dialect-independent adapter checks: every error case
// through Chat and Stream, transport failures, bad success bodies,
// truncated streams and cancellation.
type Suite struct {
	// New returns the adapter under test, talking to baseURL.
	New func(baseURL string) provider.Adapter
	// Errors are the provider's error responses.
	Errors []ErrorCase
	// StreamHead is the start of a valid stream that delivered no content yet.
	StreamHead string
}

func request() *provider.Request {
	return &provider.Request{Model: "m-1", Messages: []provider.Message{{Role: provider.RoleUser,
		Content: []provider.Part{{Type: provider.PartText, Text: "hi"}}}}}
}

// mustError checks err is a *provider.Error of class want.
func mustError(t *testing.T, err error, want classify.Class) *provider.Error {
	t.Helper()
	pe := provider.AsError(err)
	if pe == nil {
		t.Fatalf("err = %v (%T), want a *provider.Error", err, err)
	}
	if pe.Verdict.Class != want {
		t.Errorf("class = %q, want %q (verdict %+v)", pe.Verdict.Class, want, pe.Verdict)
	}
	if pe.Error() == "" || strings.Contains(pe.Error(), "\n") {
		t.Errorf("Error() = %q, want one non-empty line", pe.Error())
	}
	return pe
}

// Run runs the suite.
func (s Suite) Run(t *testing.T) {
	t.Run("errors", s.RunErrors)
	s.runRest(t)
}

// RunErrors checks only the error cases.
func (s Suite) RunErrors(t *testing.T) {
	for _, tc := range s.Errors {
		t.Run(tc.Name, func(t *testing.T) {
			up := NewUpstream(t, Reply(tc.Status, tc.Body, tc.Header...))
			a := s.New(up.URL)
			_, err := a.Chat(context.Background(), request())
			pe := mustError(t, err, tc.Want)
			if pe.Provider != a.Name() || pe.Verdict.Status != tc.Status {
				t.Errorf("provider, status = %q, %d; want %q, %d", pe.Provider, pe.Verdict.Status, a.Name(), tc.Status)
			}
			_, err = a.Stream(context.Background(), request())
			mustError(t, err, tc.Want)
		})
	}
}

// runRest runs the checks beyond the error cases, one method each.
func (s Suite) runRest(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T)
	}{
		{"key never echoed", s.keyNeverEchoed},
		{"transport", s.transport},
		{"bad success body", s.badSuccessBody},
		{"stream answered with JSON", s.streamAnsweredWithJSON},
		{"truncated stream before content", s.truncatedStreamBeforeContent},
		{"cancel", s.cancel},
		{"close while receiving", s.closeWhileReceiving},
		{"cancel mid-stream", s.cancelMidStream},
	} {
		t.Run(tc.name, tc.run)
	}
}

// closedWithin fails t unless ch is closed within 10 seconds; what says
// what the upstream should have seen.
func closedWithin(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream never saw " + what)
	}
}

func (s Suite) keyNeverEchoed(t *testing.T) {
	// An upstream that echoes the key it got (as some proxies and old
	// APIs do) must not make the adapter's error line carry it.
	up := NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("x-api-key") + r.Header.Get("api-key") + r.Header.Get("x-goog-api-key") +
			strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		Reply(401, `{"error":{"message":"Incorrect API key provided: `+key+`","type":"invalid_request_error","code":"invalid_api_key"},"type":"error"}`)(w, r)
	})
	a := s.New(up.URL)
	_, err := a.Chat(context.Background(), request())
	pe := mustError(t, err, classify.Auth)
	key := up.Last().Header.Get("x-api-key") + up.Last().Header.Get("x-goog-api-key") +
		strings.TrimPrefix(up.Last().Header.Get("Authorization"), "Bearer ")
	if len(key) < 8 {
		t.Fatalf("the adapter sent no key (%q)", key)
	}
	if strings.Contains(pe.Error(), key) || strings.Contains(pe.Verdict.Message, key) {
		t.Errorf("error line carries the key: %q", pe.Error())
	}
}

func (s Suite) transport(t *testing.T) {
	refused := "http://" + pipenet.Refused(t)
	reset := NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		c, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			c.(*net.TCPConn).SetLinger(0)
			c.Close()
		}
	})
	midBody := NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "4096")
		w.WriteHeader(200)
		io.WriteString(w, `{"id":"x","cho`)
	})
	untrusted := httptest.NewTLSServer(Reply(200, "{}"))
	defer untrusted.Close()
	tests := []struct {
		name, url string
		want      classify.Class
	}{
		{"untrusted TLS certificate", untrusted.URL, classify.Network},
		{"connection refused", refused, classify.Network},
		{"connection reset", reset.URL, classify.Network},
		{"EOF mid-body", midBody.URL, classify.Network},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.New(tc.url).Chat(context.Background(), request())
			pe := mustError(t, err, tc.want)
			if pe.Err == nil {
				t.Errorf("Err = nil, want the transport error wrapped")
			}
		})
	}
	t.Run("deadline exceeded", func(t *testing.T) {
		ctx, cancel := context.WithDeadline(context.Background(), time.Unix(1, 0))
		defer cancel()
		_, err := s.New(refused).Chat(ctx, request())
		mustError(t, err, classify.Timeout)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("errors.Is(err, DeadlineExceeded) = false for %v", err)
		}
	})
}

func (s Suite) badSuccessBody(t *testing.T) {
	for _, body := range []string{"", "<html><body>ok</body></html>", `{"id":"trunc`, `[]`, `{}`, `null`, `{"choices":"x","content":7,"candidates":{}}`} {
		up := NewUpstream(t, Reply(200, body))
		resp, err := s.New(up.URL).Chat(context.Background(), request())
		if err == nil {
			t.Errorf("body %q: resp = %+v, want an error", body, resp)
			continue
		}
		if provider.AsError(err) == nil {
			t.Errorf("body %q: err = %v (%T), want a *provider.Error", body, err, err)
		}
	}
}

func (s Suite) streamAnsweredWithJSON(t *testing.T) {
	up := NewUpstream(t, Reply(200, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`))
	st, err := s.New(up.URL).Stream(context.Background(), request())
	if err == nil {
		st.Close()
		t.Fatal("Stream on a JSON body returned a stream")
	}
	if provider.AsError(err) == nil {
		t.Errorf("err = %v (%T), want a *provider.Error", err, err)
	}
}

func (s Suite) truncatedStreamBeforeContent(t *testing.T) {
	up := NewUpstream(t, SSE(s.StreamHead))
	st, err := s.New(up.URL).Stream(context.Background(), request())
	if err != nil {
		t.Fatal(err)
	}
	_, err = Collect(st)
	pe := mustError(t, err, classify.Network)
	if pe.AfterFirstToken {
		t.Errorf("AfterFirstToken = true before any content")
	}
	if _, err := st.Recv(); provider.AsError(err) == nil {
		t.Errorf("Recv after the end = %v, want the same *provider.Error", err)
	}
}

func (s Suite) cancel(t *testing.T) {
	for _, stream := range []bool{false, true} {
		arrived, gone := make(chan struct{}), make(chan struct{})
		up := NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			close(arrived)
			<-r.Context().Done()
			close(gone)
		})
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-arrived; cancel() }()
		a := s.New(up.URL)
		var err error
		if stream {
			_, err = a.Stream(ctx, request())
		} else {
			_, err = a.Chat(ctx, request())
		}
		if !errors.Is(err, context.Canceled) || provider.AsError(err) == nil {
			t.Errorf("stream=%v: err = %v, want a *provider.Error wrapping context.Canceled", stream, err)
		}
		closedWithin(t, gone, fmt.Sprintf("the request cancelled (stream=%v)", stream))
	}
}

func (s Suite) closeWhileReceiving(t *testing.T) {
	gone := make(chan struct{})
	up := NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, s.StreamHead)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(gone)
	})
	st, err := s.New(up.URL).Stream(context.Background(), request())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := Collect(st)
		done <- err
	}()
	st.Close() // from another goroutine, maybe while Recv blocks
	if err := <-done; provider.AsError(err) == nil {
		t.Errorf("Recv after Close = %v, want a *provider.Error", err)
	}
	if _, err := st.Recv(); provider.AsError(err) == nil {
		t.Errorf("Recv after the end = %v", err)
	}
	closedWithin(t, gone, "the stream closed")
}

func (s Suite) cancelMidStream(t *testing.T) {
	gone := make(chan struct{})
	up := NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		bw := bufio.NewWriter(w)
		bw.WriteString(s.StreamHead)
		bw.Flush()
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(gone)
	})
	ctx, cancel := context.WithCancel(context.Background())
	st, err := s.New(up.URL).Stream(ctx, request())
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	_, err = Collect(st)
	if !errors.Is(err, context.Canceled) || provider.AsError(err) == nil {
		t.Errorf("err = %v, want a *provider.Error wrapping context.Canceled", err)
	}
	closedWithin(t, gone, "the stream cancelled")
}
