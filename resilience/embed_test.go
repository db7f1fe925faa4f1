package resilience

import (
	"context"
	"errors"
	"github.com/llmguard/llmguard/catalog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/llmguard/llmguard/provider"
)

// fakeEmbedder is a chat fake that also embeds: each call answers the
// next of its model's script (an error, or vectors of a size), the last
// repeating; a model with no script gives 4-dimension vectors.
type fakeEmbedder struct {
	*fakeAdapter
	mu    sync.Mutex
	embed map[string][]embedReply
	got   []provider.EmbedRequest
}

type embedReply struct {
	err  *provider.Error
	dims int
}

func (f *fakeEmbedder) Embed(ctx context.Context, req *provider.EmbedRequest) (*provider.EmbedResponse, error) {
	f.mu.Lock()
	f.got = append(f.got, *req)
	rs := f.embed[req.Model]
	r := embedReply{dims: 4}
	if len(rs) > 0 {
		r = rs[0]
		if len(rs) > 1 {
			f.embed[req.Model] = rs[1:]
		}
	}
	f.mu.Unlock()
	if r.err != nil {
		return nil, r.err
	}
	if req.Dimensions > 0 && len(rs) == 0 {
		r.dims = req.Dimensions
	}
	out := &provider.EmbedResponse{Provider: f.name, Model: req.Model, Usage: provider.Usage{InputTokens: 7}}
	for range req.Input {
		out.Vectors = append(out.Vectors, make([]float32, r.dims))
	}
	return out, nil
}

func (f *fakeEmbedder) requests() []provider.EmbedRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]provider.EmbedRequest(nil), f.got...)
}

// embedHarness is a harness whose adapters "x" and "y" embed ("a" does not).
func embedHarness(t *testing.T, routes map[string]*Route, models map[string]catalog.Model) (*harness, map[string]*fakeEmbedder) {
	t.Helper()
	ems := map[string]*fakeEmbedder{}
	h := newHarness(t, routes, func(o *Options) {
		o.Catalog = &catalog.Catalog{Models: models}
		for _, n := range []string{"x", "y"} {
			ems[n] = &fakeEmbedder{fakeAdapter: newFake(n), embed: map[string][]embedReply{}}
			o.Adapters[n] = ems[n]
		}
	})
	return h, ems
}

func TestEmbedRetriesAndFallsBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		models := map[string]catalog.Model{
			"x/small": {Dimensions: 4},
			"y/flex":  {Dimensions: 8, MinDimensions: 2},
			"y/big":   {Dimensions: 8},
		}
		routes := map[string]*Route{
			"emb":   {Targets: targets("x/small", "a/chat", "y/big", "y/flex")},
			"asked": {Targets: targets("y/big", "y/flex", "x/small")},
		}
		h, ems := embedHarness(t, routes, models)
		ems["x"].embed["small"] = []embedReply{{err: errOverloaded}, {err: errOverloaded}, {err: errOverloaded}, {err: errOverloaded}}
		res, err := h.eng.Embed(context.Background(), &EmbedCall{Route: "emb", Request: &provider.EmbedRequest{Input: []string{"a", "b"}}})
		if err != nil {
			t.Fatal(err)
		}
		// x/small retried to its max_attempts, a/chat skipped (no embeddings),
		// y/big skipped (8 dimensions, not 4), y/flex asked for 4.
		if res.Target != "y/flex" || res.Attempts != 5 || res.Fallbacks != 1 || len(res.Response.Vectors) != 2 || len(res.Response.Vectors[0]) != 4 {
			t.Fatalf("%+v", res)
		}
		got := ems["y"].requests()
		if len(got) != 1 || got[0].Model != "flex" || got[0].Dimensions != 4 {
			t.Errorf("y got %+v", got)
		}
		var skips []string
		for _, e := range h.Events() {
			if e.Kind == EventSkip {
				skips = append(skips, e.Target+": "+e.Reason)
			}
		}
		if len(skips) != 2 || !strings.Contains(skips[0], "a has no embeddings API") || !strings.Contains(skips[1], "gives 8-dimension vectors, the call needs 4") {
			t.Errorf("skips %q", skips)
		}

		// An explicit size picks the targets that give it.
		res, err = h.eng.Embed(context.Background(), &EmbedCall{Route: "asked", Request: &provider.EmbedRequest{Input: []string{"a"}, Dimensions: 2}})
		if err != nil || res.Target != "y/flex" {
			t.Fatalf("%+v %v", res, err)
		}
	})
}

func TestEmbedTerminalAndWrongSize(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		models := map[string]catalog.Model{"x/m": {Dimensions: 4}, "y/m": {Dimensions: 4}}
		h, ems := embedHarness(t, map[string]*Route{"r": {Targets: targets("x/m", "y/m")}}, models)
		// A bad request is not retried nor sent elsewhere.
		ems["x"].embed["m"] = []embedReply{{err: errInvalid}}
		_, err := h.eng.Embed(context.Background(), &EmbedCall{Route: "r", Request: &provider.EmbedRequest{Input: []string{"a"}}})
		if !errors.Is(err, ErrRejected) || len(ems["y"].requests()) != 0 || len(ems["x"].requests()) != 1 {
			t.Fatalf("err %v; x %d y %d", err, len(ems["x"].requests()), len(ems["y"].requests()))
		}
		// Vectors of another size than the catalogue says fail over.
		ems["x"].embed["m"] = []embedReply{{dims: 3}}
		res, err := h.eng.Embed(context.Background(), &EmbedCall{Route: "r", Request: &provider.EmbedRequest{Input: []string{"a"}}})
		if err != nil || res.Target != "y/m" {
			t.Fatalf("%+v %v", res, err)
		}
		// Unknown sizes: only the same model may stand in.
		h2, ems2 := embedHarness(t, map[string]*Route{"r": {Targets: targets("x/m", "y/other", "y/m")}}, nil)
		ems2["x"].embed["m"] = []embedReply{{err: errServer}}
		res, err = h2.eng.Embed(context.Background(), &EmbedCall{Route: "r", Request: &provider.EmbedRequest{Input: []string{"a"}}})
		if err != nil || res.Target != "y/m" || len(ems2["y"].requests()) != 1 {
			t.Fatalf("%+v %v", res, err)
		}
		for _, e := range h2.Events() {
			if e.Kind == EventSkip && (e.Target != "y/other" || !strings.Contains(e.Reason, "set models.y/other.dimensions")) {
				t.Errorf("skip %s: %s", e.Target, e.Reason)
			}
		}
	})
}
