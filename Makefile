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

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
	$(GO) run ./cmd/llmguard bench chaos --out bench-out

fmt:
	gofmt -w .
