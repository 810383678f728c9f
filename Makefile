# StandMeet server. The whole set-up on a fresh machine is `make run` and
# `make test`: both start a private PostgreSQL cluster under .devdb/ when no
# DATABASE_URL / TEST_DATABASE_URL is given.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
export PATH := /usr/local/go/bin:$(PATH)
GO ?= go
WIRE := $(GO) run github.com/google/wire/cmd/wire@v0.7.0
STATICCHECK := $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
DEVKEY := .devdb/master.key
PKGS := ./...
# Redocly CLI lints the OpenAPI document in make test (npm package, pinned).
REDOCLY_VERSION := 2.77.0
REDOCLY := .tools/redocly/node_modules/.bin/redocly

.PHONY: run build test browser sender-tools openapi-linter test-go test-race lint generate check-generated devdb devdb-stop bench test-faults clean

# VERSION names the build in the webhooks' User-Agent, MCP and OpenAPI.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o bin/standmeet ./cmd/server

# run: the server on the private cluster (or DATABASE_URL), with a dev master key.
run: build
	@mkdir -p .devdb
	@[ -f $(DEVKEY) ] || (head -c 32 /dev/urandom | base64 > $(DEVKEY) && chmod 600 $(DEVKEY))
	@url="$${DATABASE_URL:-$$(scripts/devdb.sh start)}"; \
	if [ -z "$${STANDMEET_MASTER_KEY:-}" ] && [ -z "$${STANDMEET_MASTER_KEY_FILE:-}" ]; then export STANDMEET_MASTER_KEY_FILE=$(DEVKEY); fi; \
	export DATABASE_URL="$$url" STANDMEET_LOG="$${STANDMEET_LOG:-console}"; \
	./bin/standmeet migrate >/dev/null && exec ./bin/standmeet serve

# test: every check CI runs — generated code fresh, lint, then every test on real PostgreSQL.
test: browser sender-tools openapi-linter check-generated lint test-go test-race

# browser: Debian's chromium for the browser tests (cmd/server/e2e_browser_test.go).
# Installed with apt-get when it is missing and we run as root; otherwise this
# only says what it found. Without it the browser tests skip, unless
# STANDMEET_REQUIRE_BROWSER=1 (CI), where they fail.
browser:
	@if command -v chromium >/dev/null 2>&1; then \
	  echo "browser: $$(command -v chromium) is installed"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "browser: chromium is missing; running apt-get update && apt-get install -y chromium"; \
	  if ! (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null); then \
	    echo "browser: installing chromium failed; the browser tests will skip"; \
	    [ "$${STANDMEET_REQUIRE_BROWSER:-}" != 1 ]; \
	  fi; \
	else \
	  echo "browser: chromium is missing and cannot be installed here (needs root and apt-get); the browser tests will skip"; \
	fi

# sender-tools: curl and openssl, which the inbound source page's signing
# examples use and cmd/server/e2e_inbound_page_test.go runs as a sender would.
# Installed with apt-get when missing and we run as root; otherwise that test
# skips with a message, unless STANDMEET_REQUIRE_SENDER_TOOLS=1 (CI).
sender-tools:
	@missing=""; for t in curl openssl; do command -v $$t >/dev/null 2>&1 || missing="$$missing $$t"; done; \
	if [ -z "$$missing" ]; then \
	  echo "sender-tools: curl and openssl are installed"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "sender-tools:$$missing missing; running apt-get update && apt-get install -y$$missing"; \
	  if ! (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null); then \
	    echo "sender-tools: installing$$missing failed; the signing example test will skip"; \
	    [ "$${STANDMEET_REQUIRE_SENDER_TOOLS:-}" != 1 ]; \
	  fi; \
	else \
	  echo "sender-tools:$$missing missing and cannot be installed here (needs root and apt-get); the signing example test will skip"; \
	  [ "$${STANDMEET_REQUIRE_SENDER_TOOLS:-}" != 1 ]; \
	fi

# openapi-linter: Redocly CLI from the npm registry under .tools/, for the
# OpenAPI lint test (cmd/server/e2e_openapi_lint_test.go). Without npm the
# test skips with a message, unless STANDMEET_REQUIRE_LINT=1 (CI).
openapi-linter:
	@if [ -x $(REDOCLY) ] && [ "$$(cat .tools/redocly/node_modules/@redocly/cli/package.json 2>/dev/null | grep -c '"version": "$(REDOCLY_VERSION)"')" = 1 ]; then \
	  echo "openapi-linter: redocly $(REDOCLY_VERSION) is installed"; \
	elif command -v npm >/dev/null 2>&1; then \
	  echo "openapi-linter: installing @redocly/cli@$(REDOCLY_VERSION) under .tools/redocly"; \
	  mkdir -p .tools/redocly && (cd .tools/redocly && npm install --no-audit --no-fund --loglevel=error @redocly/cli@$(REDOCLY_VERSION) >/dev/null) || \
	  { echo "openapi-linter: installing redocly failed; the OpenAPI lint test will skip"; [ "$${STANDMEET_REQUIRE_LINT:-}" != 1 ]; }; \
	else \
	  echo "openapi-linter: npm is missing; the OpenAPI lint test will skip"; [ "$${STANDMEET_REQUIRE_LINT:-}" != 1 ]; \
	fi

# FAULT_PKGS are the fault tests. Their bounded versions time a fleet of
# server processes (a drain's longest pause, a sick endpoint's harm), so
# test-go runs them after every other package instead of beside them: on two
# cores, thirty packages at once would time the machine, not the server.
FAULT_PKGS := ./internal/faults/...

test-go:
	@url="$${TEST_DATABASE_URL:-$${DATABASE_URL:-$$(scripts/devdb.sh start)}}"; \
	if [ -x $(REDOCLY) ]; then export STANDMEET_REDOCLY="$(CURDIR)/$(REDOCLY)"; fi; \
	faults="$$($(GO) list $(FAULT_PKGS))"; \
	TEST_DATABASE_URL="$$url" $(GO) test -count=1 -timeout 15m $$($(GO) list $(PKGS) | grep -vxF "$$faults") && \
	TEST_DATABASE_URL="$$url" $(GO) test -count=1 -timeout 15m $(FAULT_PKGS)

# RACE_PKGS are the concurrent packages: webhook delivery and its grouped
# statements, the event relay, inbound processing and publishing. test-race runs their tests again under
# the race detector, on the same database as test-go.
RACE_PKGS := ./internal/owner/webhook/delivery/... ./internal/adapters/riverjob ./internal/infra/events \
	./internal/owner/inbound/... ./internal/adapters/postgres/inbounddb ./internal/owner/publish/... \
	./internal/adapters/postgres/publishdb ./internal/adapters/postgres/batch ./internal/adapters/postgres/webhookdb

test-race:
	@url="$${TEST_DATABASE_URL:-$${DATABASE_URL:-$$(scripts/devdb.sh start)}}"; \
	TEST_DATABASE_URL="$$url" $(GO) test -race -count=1 -timeout 15m $(RACE_PKGS)

lint:
	@bad="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.devdb/*'))"; \
	if [ -n "$$bad" ]; then echo "gofmt would change:"; echo "$$bad"; exit 1; fi
	$(GO) vet $(PKGS)
	$(STATICCHECK) $(PKGS)

generate:
	cd cmd/server && $(WIRE) .

# check-generated fails when wire_gen.go is stale.
check-generated:
	@tmp="$$(mktemp -d)"; cp cmd/server/wire_gen.go "$$tmp/"; \
	(cd cmd/server && $(WIRE) . >/dev/null); \
	if ! diff -q "$$tmp/wire_gen.go" cmd/server/wire_gen.go >/dev/null; then \
	  cp "$$tmp/wire_gen.go" cmd/server/wire_gen.go; echo "cmd/server/wire_gen.go is stale: run make generate and commit it"; exit 1; fi

devdb:
	@scripts/devdb.sh start

devdb-stop:
	@scripts/devdb.sh stop

# bench: the figures of README "Performance", each beside a ceiling measured
# in the same run; the server runs as child processes of bin/standmeet. The
# database is a private cluster with PostgreSQL's production durability
# (DEVDB_DURABLE=1 scripts/devdb.sh); BENCHFLAGS=-fast-db uses the tests'
# cluster (fsync, synchronous_commit and full_page_writes off) for quick loops.
bench: build
	@if [[ " $(BENCHFLAGS) " == *" -fast-db "* ]]; then start="scripts/devdb.sh start"; else start="env DEVDB_DURABLE=1 scripts/devdb.sh start"; fi; \
	url="$${DATABASE_URL:-$$($$start)}"; \
	DATABASE_URL="$$url" $(GO) run ./cmd/bench -server bin/standmeet $(BENCHFLAGS)

# test-faults: the full fault tests (kill -9 of replicas, a PostgreSQL
# restart on a private cluster, flaky and hostile receivers, the lease);
# -v prints what each one counted (duplicates, kills, answers). make test
# runs a bounded version of the same package.
test-faults:
	@url="$${TEST_DATABASE_URL:-$${DATABASE_URL:-$$(scripts/devdb.sh start)}}"; \
	TEST_DATABASE_URL="$$url" STANDMEET_FAULTS=full $(GO) test -count=1 -v -timeout 30m -run 'Fault' ./internal/faults/...

clean:
	rm -rf bin
