package resilience

import (
	"context"
	"testing"
	"time"

	"github.com/llmguard/llmguard/provider"
)

// nopAdapter answers instantly with a shared response: the cost of the
// engine around it is all that a benchmark measures.
type nopAdapter struct{ resp *provider.Response }

func (a nopAdapter) Name() string { return "a" }
func (a nopAdapter) Chat(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	return a.resp, nil
}
func (a nopAdapter) Stream(ctx context.Context, req *provider.Request) (provider.Stream, error) {
	return noStream{}.Stream(ctx, req) // a Chat is then a plain Chat
}

func benchEngine(b *testing.B, maxConcurrency int) (*Engine, provider.Adapter) {
	ad := nopAdapter{resp: &provider.Response{Text: "ok", Usage: provider.Usage{InputTokens: 10, OutputTokens: 5}}}
	eng, err := New(&Options{
		Routes: map[string]Route{
			"default": {Targets: targets("a/m1", "a/m2"), MaxConcurrency: maxConcurrency},
		},
		Adapters: map[string]provider.Adapter{"a": ad},
	})
	if err != nil {
		b.Fatal(err)
	}
	return eng, ad
}

// BenchmarkAdapterDirect is the baseline: the adapter called directly.
func BenchmarkAdapterDirect(b *testing.B) {
	_, ad := benchEngine(b, 0)
	ctx := context.Background()
	req := userReq("hello")
	req.Model = "m1"
	benchLoop(b, func() error {
		_, err := ad.Chat(ctx, req)
		return err
	})
}

// BenchmarkChatNoFault is the same call through the engine on the no-fault
// path: route lookup, deadline, both breakers read, attempt, success.
func BenchmarkChatNoFault(b *testing.B) {
	eng, _ := benchEngine(b, 0)
	benchChat(context.Background(), b, eng)
}

// BenchmarkChatNoFaultBulkhead adds a concurrency limit (a semaphore slot).
func BenchmarkChatNoFaultBulkhead(b *testing.B) {
	eng, _ := benchEngine(b, 100)
	benchChat(context.Background(), b, eng)
}

// benchChat times a one-message Chat through eng under ctx.
func benchChat(ctx context.Context, b *testing.B, eng *Engine) {
	call := &Call{Request: userReq("hello")}
	benchLoop(b, func() error {
		_, err := eng.Chat(ctx, call)
		return err
	})
}

// benchLoop times f, which must not fail, with allocations reported.
func benchLoop(b *testing.B, f func() error) {
	b.ReportAllocs()
	for b.Loop() {
		if err := f(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkChatNoFaultParallel runs the no-fault path from every CPU.
func BenchmarkChatNoFaultParallel(b *testing.B) {
	eng, _ := benchEngine(b, 0)
	call := &Call{Request: userReq("hello")}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			if _, err := eng.Chat(ctx, call); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkAdapterDirectWithDeadline is the baseline a careful caller pays
// anyway: the adapter under a context with a timeout (one runtime timer).
func BenchmarkAdapterDirectWithDeadline(b *testing.B) {
	_, ad := benchEngine(b, 0)
	ctx := context.Background()
	req := userReq("hello")
	req.Model = "m1"
	b.ReportAllocs()
	for b.Loop() {
		actx, cancel := context.WithTimeout(ctx, 30*time.Second)
		if _, err := ad.Chat(actx, req); err != nil {
			b.Fatal(err)
		}
		cancel()
	}
}

// BenchmarkChatNoFaultCallerDeadline is the no-fault path under a caller's
// deadline that comes before the header timeout (an MCP tool call, a client
// with a short timeout): the caller's context bounds the attempt already.
func BenchmarkChatNoFaultCallerDeadline(b *testing.B) {
	eng, _ := benchEngine(b, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	benchChat(ctx, b, eng)
}
