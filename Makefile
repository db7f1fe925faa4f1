# llmguard — `make test` runs every test (the README's and CI's command).
GO ?= go

.PHONY: test vet gotest build bench fmt

test: vet gotest

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { echo "gofmt needed:"; gofmt -l .; exit 1; }
	$(GO) vet ./...

# The chaos test runs alone, after the rest: it measures the gateway under a
# load of its own, which the other packages' tests must not starve.
gotest:
	$(GO) test -race -count=1 $$($(GO) list ./... | grep -v '/test/chaos$$')
	$(GO) test -race -count=1 ./test/chaos

build:
	$(GO) build -o bin/llmguard ./cmd/llmguard

# make bench: the micro-benchmarks (a short -benchtime: the machine is
# shared), then the scorecards on 127.0.0.1, each bounded in time: the
# scaling table (issue 19) and the overhead scorecard (issue 18), both
# beside a plain httputil.ReverseProxy measured in the same run, and the
# chaos scorecard (issue 18).
BENCHTIME ?= 100ms
bench: build
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./...
	bin/llmguard bench scaling
	bin/llmguard bench overhead --duration 10s
	bin/llmguard bench chaos --out bench-out

fmt:
	gofmt -w .
