# leaguectl: build, test, benchmark, fuzz and lint.
GO       ?= go
FUZZTIME ?= 30s
STATICCHECK_VERSION ?= v0.8.2

.PHONY: all build test unit e2e bench fuzz lint fmt-check vet conformance clean

all: build test

## build: the leaguectl binary in bin/
build:
	$(GO) build -o bin/leaguectl .

## test: formatting, vet, every package under the race detector, and the end-to-end tests
test: fmt-check vet unit e2e

## unit: every package but e2e, under the race detector
unit:
	$(GO) test -race -count=1 $$($(GO) list ./... | grep -v '/e2e$$')

## e2e: the built binary as real processes (manager, referees, players, start,
## query, check, export, kill -9 and restart) and scripts/local-league.sh
e2e:
	$(GO) test -race -count=1 ./e2e/

fmt-check:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

## bench: every benchmark, with allocations (compare runs with benchstat), then
## the table of issue 8's targets measured on whole leagues of the built binary
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
	$(GO) run ./internal/cmd/benchtable

## fuzz: every fuzz target for FUZZTIME each (the seed corpora also run in 'make test')
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

## conformance: the official MCP conformance suite (npx) against a manager, a referee and a player
conformance:
	scripts/ci-conformance.sh

## lint: gofmt, vet and staticcheck
lint: fmt-check vet
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

clean:
	rm -rf bin
