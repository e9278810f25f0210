# toolcage — build, test, benchmark and demo.
# `make demo` and `make test` work from a clean clone on Debian: missing
# system packages are installed with apt-get, Go modules from the proxy.

GO       ?= go
BIN      := bin
VERSION  ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X github.com/toolcage/toolcage/daemon.Version=$(VERSION)
# The race detector and SQLite need cgo; the executor must not.
export CGO_ENABLED := 1

.PHONY: all deps build demo test bench lint proto clean

all: build

deps:
	@./scripts/deps.sh

build: deps
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/toolcage-executor ./cmd/toolcage-executor
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/toolcage-sandbox ./cmd/toolcage-sandbox
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/toolcage ./cmd/toolcage
	CGO_ENABLED=0 $(GO) build -o $(BIN)/stubserver ./examples/stubserver

lint: deps
	@fmt=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$fmt" ]; then echo "gofmt needed:"; echo "$$fmt"; exit 1; fi
	$(GO) vet ./...

test: build lint
	TOOLCAGE_BIN_DIR=$(CURDIR)/$(BIN) $(GO) test -race -count=1 -timeout 15m ./...

bench: build
	@TOOLCAGE_BIN_DIR=$(CURDIR)/$(BIN) ./scripts/bench.sh

demo: build
	@./scripts/demo.sh $(BIN)

# Regenerate the executor protocol (needs protoc and the Go plugins).
proto:
	command -v protoc >/dev/null || (apt-get update -qq && apt-get install -y -qq protobuf-compiler)
	GOFLAGS= $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
	GOFLAGS= $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
	cd executors/proto && PATH="$$PATH:$$($(GO) env GOPATH)/bin" protoc --go_out=. --go_opt=paths=source_relative \
		--go-grpc_out=. --go-grpc_opt=paths=source_relative executor.proto

clean:
	rm -rf $(BIN)
