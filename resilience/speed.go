package resilience

import (
	"sync/atomic"
	"time"

	"github.com/llmguard/llmguard/provider"
)

// A Chat is asked for as a stream (chat.go) because a plain answer sends
// its headers only when it is done: a header timeout could not tell a long
// answer from silence. A call whose answer cannot be long has no reason
// to stream, and a stream costs the engine a wake-up and a decoded event
// per token where a plain answer costs one body. So a Chat goes plain
// when its request bounds the answer (max_tokens) and the target's recent
// answers say that many tokens come well within the time the stream form
// would wait for the first token: the slowest recent time per output
// token (the whole answer's time over its tokens, so waiting for the first
// one counts), times max_tokens, times speedMargin, within the first-token
// timeout. The plain call is cut at the first-token timeout plus that
// expected time (never past the header timeout), so silence is caught
// about as soon as the stream form would catch it (and silence past
// silent_after, then a hang-up, is the timeout it is on a stream). A
// plain call cut so is the target's timeout like any other, and its Chats
// stream again until they have shown their pace anew. A target whose
// answers think (reasoning tokens, thinking blocks) streams always: how
// long it thinks is not bounded by what it says.

// speedSamples is how many answers a target gives before its pace counts.
const speedSamples = 8

// speedMargin is how much slower than its slowest recent answer a target
// may get before a plain call would be cut.
const speedMargin = 4

// maxPlainTokens bounds the max_tokens of a plain call (the product with
// the pace stays far from overflowing).
const maxPlainTokens = 1 << 20

// answerSpeed is what a target's recent answers to Chats say of its pace.
// Its fields are read and written without a lock: a racing sample only
// makes the estimate a sample staler.
type answerSpeed struct {
	perToken atomic.Int64 // ns per output token: the slowest recent answer's, decaying
	samples  atomic.Int64 // answers seen since the pace was last forgotten
	thinks   atomic.Bool  // an answer spent tokens thinking: always stream
}

// note records an answer that took d, from the attempt's start to its end.
func (s *answerSpeed) note(d time.Duration, r *provider.Response) {
	if r.Usage.ReasoningTokens > 0 || len(r.Thinking) > 0 {
		s.thinks.Store(true)
		return
	}
	out := r.Usage.OutputTokens
	if out <= 0 || d <= 0 {
		return
	}
	p := int64(d) / int64(out)
	for {
		old := s.perToken.Load()
		// A slower answer sets the pace; faster ones wear it down by an
		// eighth each, so one slow answer is forgotten only slowly.
		if s.perToken.CompareAndSwap(old, max(p, old-old/8)) {
			break
		}
	}
	s.samples.Add(1)
}

// forget drops the pace: a plain call ran out of time.
func (s *answerSpeed) forget() {
	s.samples.Store(0)
	s.perToken.Store(0)
}

// expected returns how long the answer to req may take on a target with
// this pace (max_tokens at the pace, speedMargin times over), and whether
// req may be asked for plainly at all: its answer is bounded, the pace is
// known and the expected time is within firstToken, the route's
// first-token timeout (see the comment at the top).
func (s *answerSpeed) expected(req *provider.Request, firstToken time.Duration) (time.Duration, bool) {
	n := req.MaxTokens
	if n <= 0 || n > maxPlainTokens || s.thinks.Load() || s.samples.Load() < speedSamples {
		return 0, false
	}
	expect := time.Duration(s.perToken.Load()) * time.Duration(n) * speedMargin
	if expect > firstToken {
		return 0, false
	}
	return expect, true
}
