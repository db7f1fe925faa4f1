# llmguard — `make test` runs every test (the README's and CI's command).
GO ?= go

.PHONY: test vet gotest build bench fmt

test: vet gotest

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { echo "gofmt needed:"; gofmt -l .; exit 1; }
	$(GO) vet ./...

gotest:
	$(GO) test -race -count=1 ./...

build:
	$(GO) build -o bin/llmguard ./cmd/llmguard

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

fmt:
	gofmt -w .
