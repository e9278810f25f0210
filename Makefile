# toolcage — build, test, benchmark and demo.
# `make demo` and `make test` work from a clean clone on Debian: missing
# system packages are installed with apt-get, Go modules from the proxy.

GO       ?= go
BIN      := bin
VERSION  ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X github.com/toolcage/toolcage/daemon.Version=$(VERSION)
# The race detector and SQLite need cgo; the executor must not.
export CGO_ENABLED := 1

# 'make install' puts the binaries, the systemd units (service and
# socket), the man page and the shell completions under $(DESTDIR)$(PREFIX).
PREFIX   ?= /usr/local
BINDIR   ?= $(PREFIX)/bin
SHAREDIR ?= $(PREFIX)/share
MANDIR   ?= $(SHAREDIR)/man
UNITDIR  ?= $(PREFIX)/lib/systemd/system

.PHONY: all deps build demo test check fuzz bench lint proto clean man install image

all: build

deps:
	@./scripts/deps.sh

build: deps
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/toolcage-executor ./cmd/toolcage-executor
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/toolcage-sandbox ./cmd/toolcage-sandbox
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/toolcage ./cmd/toolcage
	CGO_ENABLED=0 $(GO) build -o $(BIN)/stubserver ./examples/stubserver

# staticcheck, pinned, from the Go module proxy (built once, then cached).
STATICCHECK := $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
# The packages whose tests start no daemon, executor or container: what
# 'make check' runs on every change (seconds, not minutes).
FAST_PKGS := ./errdefs/... ./principal/... ./toolspec/... ./policy/... ./store/... ./internal/... \
	./daemon/api/... ./daemon/catalog/... ./daemon/changes/... ./daemon/defs/... ./daemon/events/... \
	./daemon/kind/... ./daemon/toolset/... ./daemon/worker/...
FUZZTIME ?= 10s

lint: deps
	@fmt=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$fmt" ]; then echo "gofmt needed:"; echo "$$fmt"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...
	@./scripts/commits.sh

# The quick loop before a commit: gofmt, vet, staticcheck, commit subjects
# and the fast packages' tests (cached when nothing they read changed).
check: lint
	$(GO) test $(FAST_PKGS)

# Every fuzz target for FUZZTIME each: make fuzz FUZZTIME=1m
fuzz:
	@FUZZTIME=$(FUZZTIME) TOOLCAGE_BIN_DIR=$(CURDIR)/$(BIN) ./scripts/fuzz.sh

test: build lint
	@./scripts/deps.sh --test
	TOOLCAGE_BIN_DIR=$(CURDIR)/$(BIN) $(GO) test -race -count=1 -timeout 15m ./...
	@FUZZTIME=100x FUZZCACHE=fresh TOOLCAGE_BIN_DIR=$(CURDIR)/$(BIN) ./scripts/fuzz.sh

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

# The toolcage(1) man page, from the CLI's own help.
man: build
	@mkdir -p docs/man
	$(BIN)/toolcage man > docs/man/toolcage.1

# Installs what 'make build' made: build as yourself, then install (as root
# for /usr/local). It does not build, so 'sudo make install' never runs Go
# as root.
install:
	@for f in toolcage toolcage-executor toolcage-sandbox; do \
		test -x $(BIN)/$$f || { echo "install: $(BIN)/$$f is missing: run 'make build' first" >&2; exit 1; }; done
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(SHAREDIR)/bash-completion/completions $(DESTDIR)$(SHAREDIR)/zsh/site-functions \
		$(DESTDIR)$(SHAREDIR)/fish/vendor_completions.d
	install -m 0755 $(BIN)/toolcage $(BIN)/toolcage-executor $(BIN)/toolcage-sandbox $(DESTDIR)$(BINDIR)/
	sed 's|@BINDIR@|$(BINDIR)|g' configs/systemd/toolcage.service > $(DESTDIR)$(UNITDIR)/toolcage.service
	install -m 0644 configs/systemd/toolcage.socket $(DESTDIR)$(UNITDIR)/toolcage.socket
	chmod 0644 $(DESTDIR)$(UNITDIR)/toolcage.service
	$(BIN)/toolcage man > $(DESTDIR)$(MANDIR)/man1/toolcage.1
	$(BIN)/toolcage completion bash > $(DESTDIR)$(SHAREDIR)/bash-completion/completions/toolcage
	$(BIN)/toolcage completion zsh > $(DESTDIR)$(SHAREDIR)/zsh/site-functions/_toolcage
	$(BIN)/toolcage completion fish > $(DESTDIR)$(SHAREDIR)/fish/vendor_completions.d/toolcage.fish

clean:
	rm -rf $(BIN)

# The executor's container image for isolation: docker, built on the
# engine DOCKER_HOST names; prints the image ID to pin as docker.image_id.
image: build
	$(BIN)/toolcage image build
