package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/llmguard/llmguard/internal/httpbody"
	"github.com/llmguard/llmguard/internal/httpguard"
)

// api wraps an API handler: panic recovery, the access policy (Host and
// Origin, a CORS preflight, JSON bodies only, gateway keys) and the method
// check.
func (s *Server) api(dialect string, h func(w http.ResponseWriter, r *http.Request, dialect string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d := dialect
		models := strings.HasPrefix(r.URL.Path, "/v1/models")
		if d == DialectOpenAI && models && r.Header.Get("anthropic-version") != "" {
			d = DialectAnthropic
		}
		tw := &trackingWriter{ResponseWriter: w}
		logged := s.accessOn(r)
		if logged || s.metrics != nil || s.tracer != nil {
			tw.acc.start = time.Now()
		}
		if s.tracer != nil {
			r, tw.acc.span = s.tracer.StartHTTP(r)
		}
		defer func() {
			v := recover()
			if v != nil && v != http.ErrAbortHandler {
				s.log.Error("gateway: handler panic", "path", r.URL.Path, "panic", fmt.Sprint(v))
				if tw.wrote {
					// Part of a response went out: break the connection so
					// the client sees a failure, never a truncated success.
					v = http.ErrAbortHandler
				} else {
					writeError(tw, d, errInternal("internal gateway error"))
					v = nil
				}
			}
			if logged || s.metrics != nil || s.tracer != nil {
				s.endAccess(r, tw, d, logged) // the one place a request ends, streams included
			}
			if tw.held != nil {
				tw.held.end(v != nil || r.Context().Err() != nil)
			}
			if v != nil {
				panic(v)
			}
		}()
		want, allow := http.MethodPost, "POST, OPTIONS" // constants: no string built per request
		if models {
			want, allow = http.MethodGet, "GET, OPTIONS"
		}
		if s.guard.Preflight(tw, r, allow) {
			return
		}
		if aerr := s.admit(r, want == http.MethodPost); aerr != nil {
			writeError(tw, d, aerr)
			return
		}
		s.guard.AllowOrigin(tw.Header(), r)
		if r.Method != want {
			tw.Header().Set("Allow", want)
			writeError(tw, d, errMethod(r.Method, want))
			return
		}
		h(tw, r, d)
	})
}

// admit applies the access policy to an API request: where it comes from,
// its body type (when the path takes a JSON body) and its gateway key.
func (s *Server) admit(r *http.Request, jsonBody bool) *apiError {
	if ref := s.guard.CheckSource(r); ref != nil {
		return &apiError{status: ref.Status, kind: kindPermission, message: ref.Message, retry: "false"}
	}
	if jsonBody && r.Method == http.MethodPost {
		if ref := httpguard.CheckJSON(r); ref != nil {
			return &apiError{status: ref.Status, kind: kindInvalidRequest, message: ref.Message, retry: "false"}
		}
	}
	if s.guard.CheckKey(r) != nil {
		return errUnauthorized()
	}
	return nil
}

// idempotencyKey is the request's Idempotency-Key ("" when it has none),
// scoped to its gateway key, so two clients can't replay each other's
// answers, and to the body, so a key reused for a different request runs
// that request instead of replaying another's answer.
func (s *Server) idempotencyKey(r *http.Request, body []byte) string {
	k := r.Header.Get("Idempotency-Key")
	if k == "" {
		return ""
	}
	h := sha256.New()
	if s.guard.NeedsKey() {
		h.Write([]byte(httpguard.PresentedKey(r)))
		h.Write([]byte{0})
	}
	h.Write([]byte(r.URL.Path)) // a stored answer may be in the path's dialect
	h.Write([]byte{0})
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil)[:12]) + ":" + k
}

// repeatScope is who asks, for the engine's held failures
// (resilience.Call.RepeatScope): the gateway key the request presented, or
// "gateway" when the gateway takes no key (every caller is then the same
// client). The engine hashes it with the request and never keeps it.
func (s *Server) repeatScope(r *http.Request) string {
	if s.guard.NeedsKey() {
		return httpguard.PresentedKey(r)
	}
	return "gateway"
}

// trackingWriter records whether the response started, its status, and
// the request's access-log record.
type trackingWriter struct {
	http.ResponseWriter
	wrote  bool
	status int
	acc    access
	held   *pooledBody // the request's body, when read into a pooled buffer
}

func (t *trackingWriter) WriteHeader(code int) {
	t.wrote = true
	if t.status == 0 && code >= 200 {
		t.status = code
	}
	t.ResponseWriter.WriteHeader(code)
}

func (t *trackingWriter) Write(b []byte) (int, error) {
	t.wrote = true
	if t.status == 0 {
		t.status = http.StatusOK
	}
	return t.ResponseWriter.Write(b)
}

// Flush implements http.Flusher.
func (t *trackingWriter) Flush() {
	t.wrote = true
	if f, ok := t.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (t *trackingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// readBody reads the request body, enforcing the limit, into a buffer of
// its own: the decoded request points into it (its raw values and its
// Passthrough body), so it is never recycled.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *apiError) {
	if r.ContentLength > s.maxBody {
		return nil, errTooLarge(s.maxBody)
	}
	b, err := httpbody.Read(http.MaxBytesReader(w, r.Body, s.maxBody), r.ContentLength, maxPrealloc)
	if err != nil {
		return nil, readError(err, s.maxBody)
	}
	s.reclaim.large(len(b))
	return b, nil
}

// readRequest reads r's body (readBody) and decodes it with decode; a
// failure of either is written to w in dialect (a body decode refuses as
// invalid_request) and ok is false.
func readRequest[T any](s *Server, w http.ResponseWriter, r *http.Request, dialect string, decode func([]byte) (T, error)) (in T, ok bool) {
	body, aerr := s.readBody(w, r)
	if aerr != nil {
		writeError(w, dialect, aerr)
		return in, false
	}
	in, err := decode(body)
	if err != nil {
		writeError(w, dialect, errBadRequest(err.Error()))
		return in, false
	}
	return in, true
}

// readChatBody is readBody for a chat request, whose body, when it is
// long, is read into a pooled buffer (pooledBody): the handler gives it to
// the decoded request (decodeChat), and it goes back to the pool once
// nothing reads it any more, after the handler returned (see api).
func (s *Server) readChatBody(w http.ResponseWriter, r *http.Request) ([]byte, *pooledBody, *apiError) {
	tw, ok := w.(*trackingWriter)
	if n := r.ContentLength; !ok || n <= minPooledBody || n > maxPooledBody || n > s.maxBody {
		b, aerr := s.readBody(w, r)
		return b, nil, aerr
	}
	held, b, err := s.reclaim.readPooled(http.MaxBytesReader(w, r.Body, s.maxBody), int(r.ContentLength))
	if err != nil {
		return nil, nil, readError(err, s.maxBody)
	}
	tw.held = held
	s.reclaim.large(len(b))
	return b, held, nil
}

// readError is the error for a request body that could not be read.
func readError(err error, limit int64) *apiError {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return errTooLarge(limit)
	}
	return errBadRequest("reading request body: " + err.Error())
}

// maxPrealloc bounds what reading a body allocates on a client's word (its
// Content-Length) before the bytes arrive.
const maxPrealloc = 1 << 20

// maxPooled bounds the buffers the server keeps for encoding answers: a
// larger one (a long answer) is left to the garbage collector, so that a
// burst of large requests leaves no large buffers behind.
const maxPooled = 64 << 10

// putBuf returns an answer buffer to the pool, unless it is larger than
// maxPooled.
func (s *Server) putBuf(bp *[]byte) {
	if cap(*bp) > maxPooled {
		return
	}
	*bp = (*bp)[:0]
	s.bufs.Put(bp)
}

// eventWriter is the part of *sse.Writer the stream encoders use.
type eventWriter interface {
	Event(name string, data []byte) error
}

// checkNames refuses a request whose model or fallback names are longer
// than maxModelName, or that lists more than maxFallbacks fallbacks.
func checkNames(in *inbound) *apiError {
	if len(in.fallbacks) > maxFallbacks {
		return errBadRequest("too many fallbacks: " + strconv.Itoa(len(in.fallbacks)) + " (at most " + strconv.Itoa(maxFallbacks) + ")")
	}
	for i, n := range append([]string{in.model}, in.fallbacks...) {
		if len(n) > maxModelName {
			what := "model"
			if i > 0 {
				what = "fallback"
			}
			return errBadRequest(what + " name of " + strconv.Itoa(len(n)) + " bytes: at most " +
				strconv.Itoa(maxModelName) + " (" + strconv.Quote(strings.ToValidUTF8(n[:64], "")+"…") + ")")
		}
	}
	return nil
}

// headerValue cuts s to maxHeaderValue bytes on a rune boundary.
func headerValue(s string) string {
	if len(s) <= maxHeaderValue {
		return s
	}
	return strings.ToValidUTF8(s[:maxHeaderValue-3], "") + "…"
}

var _ io.Writer = (*trackingWriter)(nil)

// Bounds on what a client names: each name may become engine state (a
// route plan, a target's statistics, a breaker record) and a header value.
const (
	maxModelName   = 256 // bytes of a model or fallback name
	maxFallbacks   = 16  // per-request fallback names
	maxHeaderValue = 512 // bytes of a value copied into a response header
)
