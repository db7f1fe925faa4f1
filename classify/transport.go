package classify

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
)

// classifyTransport classifies a failure where no (complete) response
// came: timeouts are Timeout, everything else on the wire is Network; both
// are retryable. A caller's own cancellation is Unknown and not retryable.
func classifyTransport(err error, h http.Header) Verdict {
	text := collapse(err.Error())
	lt := strings.ToLower(text)
	var ne net.Error
	isTimeout := errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) ||
		containsAny(lt, "timeout", "timed out", "deadline exceeded")
	v := Verdict{}
	switch {
	case isTimeout:
		v.Class, v.ProviderType = Timeout, "timeout"
	case errors.Is(err, context.Canceled) || strings.Contains(lt, "context canceled"):
		v.Class, v.ProviderType = Unknown, "canceled"
	default:
		v.Class, v.ProviderType = Network, networkKind(lt)
	}
	v.Retryable, v.Scope, v.Fallback = defaults(v.Class)
	if v.Class == Unknown {
		v.Retryable, v.Scope, v.Fallback = false, ScopeRequest, false
	}
	var rep bodyReport
	x := readHdr(h)
	v.RequestID = requestID(&x, &rep)
	prefix := string(v.Class)
	if v.Class == Unknown {
		prefix = "canceled"
	}
	kind := strings.ReplaceAll(v.ProviderType, "_", " ")
	if v.Class == Network && kind != "" && !strings.HasPrefix(lt, kind) {
		prefix += ": " + kind
	}
	msg := prefix + ": " + Redact(text)
	if v.RequestID != "" {
		msg += " (request-id " + v.RequestID + ")"
	}
	v.Message = truncate(msg, maxMessage)
	return v
}

// networkKind names the transport failure in lt (lower-cased error text).
func networkKind(lt string) string {
	switch {
	case strings.Contains(lt, "connection refused"):
		return "connection_refused"
	case strings.Contains(lt, "connection reset"):
		return "connection_reset"
	case strings.Contains(lt, "no such host"), strings.Contains(lt, "lookup "), strings.Contains(lt, "dns"):
		return "dns"
	case strings.Contains(lt, "tls"), strings.Contains(lt, "x509"), strings.Contains(lt, "certificate"):
		return "tls"
	case strings.Contains(lt, "eof"):
		return "eof"
	case strings.Contains(lt, "broken pipe"):
		return "broken_pipe"
	case strings.Contains(lt, "unreachable"):
		return "unreachable"
	}
	return "network_error"
}
