package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/llmguard/llmguard/state"
)

// RunResults runs the conformance suite for a state.ResultStore against
// stores made by newStore, each subtest with a fresh, empty store.
func RunResults(t *testing.T, newStore func(t *testing.T) state.ResultStore) {
	t.Helper()
	runCases(t, newStore, []suiteCase[state.ResultStore]{
		{"OneClaimThenResult", oneClaimThenResult},
		{"ReleaseLetsTheNextClaim", releaseLetsTheNextClaim},
		{"ClaimAndResultExpire", claimAndResultExpire},
	})
}

// suiteCase is one named subtest of a suite on stores of type S.
type suiteCase[S any] struct {
	name string
	run  func(context.Context, *testing.T, S)
}

// runCases runs each case as a subtest with a fresh store.
func runCases[S any](t *testing.T, newStore func(t *testing.T) S, cases []suiteCase[S]) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(context.Background(), t, newStore(t)) })
	}
}

// oneClaimThenResult: the first claim wins; a second sees neither claim
// nor result until the result is published, then both read it.
func oneClaimThenResult(ctx context.Context, t *testing.T, st state.ResultStore) {
	if r, ok, err := st.Claim(ctx, "default/k1", time.Minute); err != nil || !ok || r != nil {
		t.Fatalf("first Claim = %q, %v, %v; want the claim", r, ok, err)
	}
	if r, ok, err := st.Claim(ctx, "default/k1", time.Minute); err != nil || ok || r != nil {
		t.Fatalf("second Claim = %q, %v, %v; want neither claim nor result", r, ok, err)
	}
	if r, inFlight, err := st.Result(ctx, "default/k1"); err != nil || !inFlight || r != nil {
		t.Errorf("Result while claimed = %q, %v, %v", r, inFlight, err)
	}
	if err := st.Publish(ctx, "default/k1", []byte(`{"text":"hi"}`), time.Minute); err != nil {
		t.Fatal(err)
	}
	if r, inFlight, err := st.Result(ctx, "default/k1"); err != nil || inFlight || string(r) != `{"text":"hi"}` {
		t.Errorf("Result after Publish = %q, %v, %v", r, inFlight, err)
	}
	if r, ok, err := st.Claim(ctx, "default/k1", time.Minute); err != nil || ok || string(r) != `{"text":"hi"}` {
		t.Errorf("Claim after Publish = %q, %v, %v; want the result", r, ok, err)
	}
}

// releaseLetsTheNextClaim: a released claim leaves no result and lets the next claim in.
func releaseLetsTheNextClaim(ctx context.Context, t *testing.T, st state.ResultStore) {
	if _, ok, err := st.Claim(ctx, "k2", time.Minute); err != nil || !ok {
		t.Fatalf("Claim = %v, %v", ok, err)
	}
	if err := st.Release(ctx, "k2"); err != nil {
		t.Fatal(err)
	}
	if r, inFlight, err := st.Result(ctx, "k2"); err != nil || inFlight || r != nil {
		t.Errorf("Result after Release = %q, %v, %v", r, inFlight, err)
	}
	if _, ok, err := st.Claim(ctx, "k2", time.Minute); err != nil || !ok {
		t.Errorf("Claim after Release = %v, %v; want the claim", ok, err)
	}
}

// claimAndResultExpire: claims and results go at their TTL.
func claimAndResultExpire(ctx context.Context, t *testing.T, st state.ResultStore) {
	if _, ok, err := st.Claim(ctx, "k3", 50*time.Millisecond); err != nil || !ok {
		t.Fatalf("Claim = %v, %v", ok, err)
	}
	if err := st.Publish(ctx, "k4", []byte("v"), 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, claimed, err1 := st.Result(ctx, "k3")
		r, _, err2 := st.Result(ctx, "k4")
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if !claimed && r == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("claim (%v) or result (%q) kept 5s past a 50ms TTL", claimed, r)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, ok, err := st.Claim(ctx, "k3", time.Minute); err != nil || !ok {
		t.Errorf("Claim after the claim expired = %v, %v", ok, err)
	}
}
