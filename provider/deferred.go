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
	lean   *Request // decode's, whose texts may be in Part.Raw (see Lean)
	err    error
	// texts decodes lean's texts once, for Full.
	texts    sync.Once
	full     *Request
	textsErr error
}

// NewDeferred returns a Deferred whose decode gives the whole request (of
// which Full takes the deferred fields), whose texts it may leave in
// Part.Raw: Full decodes them, Lean does not. decode is called at most once.
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
func (r *Request) Full() (*Request, error) { return r.with((*Deferred).decodedTexts) }

// decodedTexts is decoded's request with its texts decoded too, on the
// first call.
func (d *Deferred) decodedTexts() (*Request, error) {
	lean, err := d.decoded()
	if err != nil {
		return nil, err
	}
	d.texts.Do(func() { d.full, d.textsErr = decodeTexts(lean) })
	return d.full, d.textsErr
}

// decoded is decode's request, decoded on the first call; its texts may
// be in Part.Raw.
func (d *Deferred) decoded() (*Request, error) {
	d.once.Do(func() {
		if d.decode != nil {
			d.lean, d.err = d.decode()
		}
		if d.lean == nil && d.err == nil {
			d.lean = &Request{}
		}
	})
	return d.lean, d.err
}

// with is r when it has no Deferred, else a copy of r, without its
// Deferred, with the deferred fields of the request decode gives it, or
// decode's error.
func (r *Request) with(decode func(*Deferred) (*Request, error)) (*Request, error) {
	if r.Deferred == nil {
		return r, nil
	}
	f, err := decode(r.Deferred)
	if err != nil {
		return nil, err
	}
	c := *r
	c.Deferred = nil
	c.System, c.Messages, c.Stop, c.Tools = f.System, f.Messages, f.Stop, f.Tools
	c.ToolChoice, c.ParallelToolCalls, c.ResponseFormat = f.ToolChoice, f.ParallelToolCalls, f.ResponseFormat
	c.Seed, c.TopK, c.User, c.Extra, c.Lossy = f.Seed, f.TopK, f.User, f.Extra, f.Lossy
	return &c, nil
}

// Hold guards the buffer a request's raw bytes lie in (its Passthrough
// body, and the raw values of its fields, decoded or deferred: Part.Raw,
// ToolCall.Arguments, Extra...) when the maker reuses that buffer once the
// request is done: the gateway reads a long body into a pooled buffer. The
// maker holds it while it calls the engine with the request; a reader that
// may outlive that call (an upstream send, a hedge that lost, a flight
// other callers share) brackets its reading with Acquire and Release
// (Request.Acquire), and must not read the request when Acquire is false:
// the buffer may hold another request by then.
type Hold interface {
	// Acquire reports whether the bytes are still the request's, and if so
	// keeps them so until the matching Release.
	Acquire() bool
	Release()
}

// Acquire acquires the Hold of r's Passthrough, if it has one (see Hold):
// true when r may be read until the matching Release, false when its bytes
// are no longer its own. A request without a Hold is always r's: true.
func (r *Request) Acquire() bool {
	if h := r.hold(); h != nil {
		return h.Acquire()
	}
	return true
}

// Release ends what a true Acquire began.
func (r *Request) Release() {
	if h := r.hold(); h != nil {
		h.Release()
	}
}

func (r *Request) hold() Hold {
	if r.Passthrough == nil {
		return nil
	}
	return r.Passthrough.Hold
}
