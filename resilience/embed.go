package resilience

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/provider"
)

// EmbedCall is one embeddings call. Like Call, the engine only reads it.
// The zero Route means "default".
type EmbedCall struct {
	// Route is a route name, or a "provider/model" target run under the
	// default route's policies.
	Route   string
	Request *provider.EmbedRequest
	// Fallbacks are targets appended to the route for this call only.
	Fallbacks []string
	// Timeout overrides the route's deadline when > 0.
	Timeout time.Duration
	// OnEvent receives this call's events, after Options.OnEvent.
	OnEvent func(Event)
}

// EmbedResult is a successful embeddings call.
type EmbedResult struct {
	Response *provider.EmbedResponse
	// Target is the "provider/model" that answered.
	Target    string
	Attempts  int
	Fallbacks int
	Waited    time.Duration
	// Cost in dollars of the answering call (input tokens at the model's
	// input price).
	Cost float64
}

// embedState is what an embeddings call's walk needs: the request and the
// vector size every target must give (0 = unknown: then only targets of the
// first one's model may serve).
type embedState struct {
	req      *provider.EmbedRequest
	dims     int
	explicit bool   // the caller asked for dims
	model    string // the model of the route's first embedding target
}

// Embed runs an embeddings call over its route with the same walk as Chat
// (retries, backoff under server hints, breakers, fallbacks, deadline).
// A target falls back only to targets that give vectors of the same size:
// the request's Dimensions, else the size of the route's first embedding
// target, from the model catalogue or the config's models key
// (dimensions, min_dimensions). A target whose adapter has no embeddings
// API, or whose vectors would differ, is skipped with the reason; an
// answer whose vectors are not of that size is a failure that falls back.
// There is no static fallback and no idempotency cache for embeddings.
func (e *Engine) Embed(ctx context.Context, c *EmbedCall) (*EmbedResult, error) {
	if c == nil || c.Request == nil {
		return nil, errors.New("resilience: EmbedCall or EmbedCall.Request is nil")
	}
	call := &Call{Route: c.Route, Fallbacks: c.Fallbacks, Timeout: c.Timeout, OnEvent: c.OnEvent}
	rp, err := e.plan(call)
	if err != nil {
		return nil, err
	}
	cs := e.newCallState(ctx, rp, call)
	cs.emb = e.embedState(rp, c.Request)
	out, t, err := cs.walk(ctx, false)
	if err != nil {
		return nil, err
	}
	attempts, fallbacks, waited := cs.counts()
	res := &EmbedResult{Response: out.emb, Target: t.name, Attempts: attempts, Fallbacks: fallbacks, Waited: waited}
	if t.priced {
		res.Cost = t.price.Cost(out.emb.Usage.InputTokens, 0)
	}
	return res, nil
}

func (e *Engine) embedState(rp *routePlan, req *provider.EmbedRequest) *embedState {
	st := &embedState{req: req, dims: req.Dimensions, explicit: req.Dimensions > 0}
	for _, t := range rp.targets {
		if _, ok := t.adapter.(provider.Embedder); !ok {
			continue
		}
		if st.model == "" {
			st.model = t.model
		}
		if st.dims == 0 {
			st.dims = t.info.Dimensions
		}
		break
	}
	return st
}

// cannotServeEmbed says why t cannot serve the embeddings call ("" if it
// can).
func (cs *callState) cannotServeEmbed(t *targetPlan) string {
	st := cs.emb
	if _, ok := t.adapter.(provider.Embedder); !ok {
		return t.provider + " has no embeddings API"
	}
	if _, ok := cs.embedDims(t); ok {
		return ""
	}
	info := &t.info
	if st.dims == 0 || info.Dimensions == 0 {
		return "vector size unknown (set models." + t.name + ".dimensions to fall back to it)"
	}
	return "gives " + strconv.Itoa(info.Dimensions) + "-dimension vectors, the call needs " + strconv.Itoa(st.dims)
}

// embedDims is the Dimensions to send to t and whether t gives vectors of
// the call's size at all.
func (cs *callState) embedDims(t *targetPlan) (int, bool) {
	st := cs.emb
	info := &t.info
	switch {
	case st.dims == 0:
		return 0, t.model == st.model // unknown size: the same model gives the same vectors
	case info.Dimensions == st.dims:
		if st.explicit && info.MinDimensions > 0 {
			return st.dims, true
		}
		return 0, true
	case info.MinDimensions > 0 && info.MinDimensions <= st.dims && st.dims <= info.Dimensions:
		return st.dims, true
	case info.Dimensions == 0 && (st.explicit || t.model == st.model):
		return st.req.Dimensions, true // unknown here: asked for, and checked on the answer
	}
	return 0, false
}

// embedAttempt makes one embeddings attempt on t, bounded like a chat
// attempt, and checks the answer's vector size.
func (cs *callState) embedAttempt(ctx context.Context, t *targetPlan, left time.Duration) (answer, *provider.Error, bool) {
	limit := min(cs.rp.headerTimeout, left)
	actx, cancel := context.WithTimeoutCause(ctx, limit, errHeaderTimeout)
	defer cancel()
	req := *cs.emb.req
	req.Model = t.model
	req.Dimensions, _ = cs.embedDims(t)
	resp, err := t.adapter.(provider.Embedder).Embed(actx, &req)
	if err == nil && resp != nil {
		if pe := cs.checkVectors(t, &req, resp); pe != nil {
			return answer{}, pe, false
		}
		return answer{emb: resp}, nil, false
	}
	if err == nil {
		err = errors.New("adapter returned no embeddings and no error")
	}
	pe, outOfTime := cs.attemptError(ctx, actx, t, err, errHeaderTimeout, limit, cs.rp.headerTimeout, "no response within")
	return answer{}, pe, outOfTime
}

// checkVectors fails an answer with a vector per input of the wrong size:
// mixing sizes would corrupt the caller's index.
func (cs *callState) checkVectors(t *targetPlan, req *provider.EmbedRequest, resp *provider.EmbedResponse) *provider.Error {
	want := cs.emb.dims
	bad := len(resp.Vectors) != len(req.Input)
	for _, v := range resp.Vectors {
		if want > 0 && len(v) != want {
			bad = true
			break
		}
	}
	if !bad {
		return nil
	}
	got := 0
	if len(resp.Vectors) > 0 {
		got = len(resp.Vectors[0])
	}
	msg := t.name + " returned " + strconv.Itoa(len(resp.Vectors)) + " vectors of " + strconv.Itoa(got) +
		" dimensions for " + strconv.Itoa(len(req.Input)) + " inputs"
	if want > 0 {
		msg += "; the call needs " + strconv.Itoa(want)
	}
	return &provider.Error{Provider: t.provider, Model: t.model, Verdict: classify.Verdict{
		Class: classify.Unknown, Scope: classify.ScopeModel, Fallback: true, Message: "bad embeddings: " + msg}}
}
