package demo

import (
	"context"
	"time"

	"github.com/llmguard/llmguard/catalog"
	"github.com/llmguard/llmguard/internal/wait"
	"github.com/llmguard/llmguard/provider"
)

// baseline is a naive client of the primary target: attempts tries per
// request, NaiveBackoff apart.
type baseline struct {
	t        *tally
	a        provider.Adapter
	model    string
	attempts int
}

func newBaseline(url string, attempts int, o Outcome) (*baseline, error) {
	ads, err := adapters(url)
	if err != nil {
		return nil, err
	}
	prov, model, _ := catalog.SplitTarget(route[0])
	return &baseline{t: &tally{o: o}, a: ads[prov], model: model, attempts: attempts}, nil
}

// run sends request i.
func (b *baseline) run(ctx context.Context, i int) {
	req := prompt(i)
	req.Model = b.model
	var err error
	for k := 0; k < b.attempts; k++ {
		if k > 0 {
			b.t.add(func(o *Outcome) { o.Retries++; o.Waited += NaiveBackoff })
			if wait.For(ctx, NaiveBackoff) != nil {
				break
			}
		}
		b.t.attempts.Add(1)
		actx, cancel := context.WithTimeout(ctx, 20*time.Second)
		if streamed(i) {
			err = b.stream(actx, req)
		} else {
			_, err = b.a.Chat(actx, req)
		}
		cancel()
		if err == nil {
			break
		}
	}
	b.t.finish(route[0], err)
}
