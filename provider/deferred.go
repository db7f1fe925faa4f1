package provider

import "sync"

// Deferred decodes, once and on first use, the fields of a Request that its
// maker left undecoded: the gateway relays a request in its own dialect
// without decoding its conversation, which only a target of another
// dialect, a token estimate, the static fallback or a continuation needs.
// The zero value decodes nothing; it is safe for concurrent use.
type Deferred struct {
	once   sync.Once
	decode func() (*Request, error)
	full   *Request
	err    error
}

// NewDeferred returns a Deferred whose decode gives the whole request (of
// which Full takes the deferred fields). decode is called at most once.
func NewDeferred(decode func() (*Request, error)) *Deferred {
	return &Deferred{decode: decode}
}

// Full returns the request with every field decoded: r itself when it has
// no Deferred, else a copy of r (its own fields as they are now) with the
// deferred fields, System, Messages, Stop, Tools, ToolChoice,
// ParallelToolCalls, ResponseFormat, Seed, TopK, User, Extra and Lossy, set
// from the one decoding r and its copies share. The error is that
// decoding's, the same on every call: the body is malformed past what its
// maker read (a message of the wrong type). Safe for concurrent use, as
// reading r is.
func (r *Request) Full() (*Request, error) {
	d := r.Deferred
	if d == nil {
		return r, nil
	}
	d.once.Do(func() {
		if d.decode != nil {
			d.full, d.err = d.decode()
		}
		if d.full == nil && d.err == nil {
			d.full = &Request{}
		}
	})
	if d.err != nil {
		return nil, d.err
	}
	c, f := *r, d.full
	c.Deferred = nil
	c.System, c.Messages, c.Stop, c.Tools = f.System, f.Messages, f.Stop, f.Tools
	c.ToolChoice, c.ParallelToolCalls, c.ResponseFormat = f.ToolChoice, f.ParallelToolCalls, f.ResponseFormat
	c.Seed, c.TopK, c.User, c.Extra, c.Lossy = f.Seed, f.TopK, f.User, f.Extra, f.Lossy
	return &c, nil
}
