# herald — `make help` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

GO            ?= go
# GOARCH of the Lambda bootstraps: arm64 (template.yaml's LambdaArchitecture default) or amd64
# (x86_64); scripts/deploy-local.sh sets this machine's.
LAMBDA_ARCH   ?= arm64
GO_BUILD_LAMBDA = CGO_ENABLED=0 GOOS=linux GOARCH=$(LAMBDA_ARCH) $(GO) build -trimpath -tags lambda.norpc -ldflags='-s -w'
SAM           := .venv/tools/bin/sam
export SAM_CLI_TELEMETRY := 0

.PHONY: help
help: ## List the targets
	@awk 'BEGIN{FS=":.*## "} /^[a-zA-Z_%-]+:.*## /{printf "  %-18s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: demo
demo: ## Demo: samples through the local stack and runner, each one's fate printed (STACK=herald-local: through that deployed stack)
	scripts/with-local-stack.sh $(GO) run ./cmd/herald-demo $(if $(STACK),-stack $(STACK))

.PHONY: test
test: test-unit test-integration ## Run every test (unit, then integration against the local stack)

.PHONY: test-unit
test-unit: ## Unit tests (no network but 127.0.0.1 test servers; bench's run the Lambda RIE, installed here)
	scripts/install-rie.sh >/dev/null
	$(GO) test -race -count=1 ./...

.PHONY: test-integration
test-integration: ## Integration tests: starts LocalStack + the SES v2 emulator, installs the Lambda RIE; also runs the endpoints guide's Python and JavaScript samples (docs/examples)
	scripts/install-rie.sh >/dev/null
	scripts/install-verifiers.sh
	scripts/with-local-stack.sh $(GO) test -tags integration -count=1 -timeout 25m ./internal/integration ./docs/examples/...

.PHONY: soak
soak: ## Chaos run with 5000 notifications, faults and kills (docs/reliability.md)
	scripts/with-local-stack.sh env HERALD_CHAOS_N=$${HERALD_CHAOS_N:-5000} $(GO) test -tags integration -count=1 -timeout 30m -run '^TestChaosNothingLost$$' -v ./internal/integration

.PHONY: lint
lint: ## go vet, gofmt, and sam validate --lint / cfn-lint on template.yaml
	$(GO) vet ./...
	$(GO) vet -tags integration ./internal/integration
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	scripts/lint-template.sh

.PHONY: bench
bench: ## Benchmarks vs goals, baseline, Powertools peers (TS fetch and node:https, Python async and sequential), Go floor, all-in cost (BENCH_QUICK=1: smoke)
	scripts/install-rie.sh >/dev/null
	bench/peer/install.sh >/dev/null
	bench/peer/install.sh bench/peer-async >/dev/null
	bench/peer-ts/install.sh
	scripts/with-local-stack.sh $(GO) run ./bench

GREMLINS_VERSION := v0.6.0
GREMLINS := .tools/gremlins-$(GREMLINS_VERSION)
$(GREMLINS):
	GOBIN=$(CURDIR)/.tools/gremlins.install $(GO) install github.com/go-gremlins/gremlins/cmd/gremlins@$(GREMLINS_VERSION)
	mv .tools/gremlins.install/gremlins $@ && rmdir .tools/gremlins.install

.PHONY: mutate
mutate: $(GREMLINS) ## Mutation testing of every package, score per package (slow; MUTATE_WORKERS=1, MUTATE_PKGS, MUTATE_DRY_RUN=1, MUTATE_EXCLUDE; docs/testing.md)
	GREMLINS=$(GREMLINS) scripts/mutate.sh $(MUTATE_PKGS)

FUZZTIME ?= 30s
.PHONY: fuzz
fuzz: ## Every fuzz target for FUZZTIME (30s); crashes stay as regression seeds
	GO=$(GO) FUZZTIME=$(FUZZTIME) scripts/fuzz.sh

.PHONY: build
build: ## Build the Lambda bootstraps (linux/LAMBDA_ARCH, default arm64) into bin/<function>/bootstrap
	$(GO_BUILD_LAMBDA) -o bin/deliver/bootstrap ./functions/deliver
	$(GO_BUILD_LAMBDA) -o bin/retention/bootstrap ./functions/retention
	$(GO_BUILD_LAMBDA) -o bin/feedback/bootstrap ./functions/feedback
	$(GO_BUILD_LAMBDA) -o bin/fanout/bootstrap ./functions/fanout
	$(GO_BUILD_LAMBDA) -o bin/endpoints/bootstrap ./functions/endpoints

.PHONY: sam-build
sam-build: ## sam build (LAMBDA_ARCH bootstraps in .aws-sam/build), SAM set up as for make lint
	scripts/sam.sh build

.PHONY: deploy
deploy: sam-build ## sam deploy with samconfig.toml (add ARGS="--guided" the first time)
	scripts/sam.sh deploy $(ARGS)

.PHONY: run
run: ## Local stack up (stays up), then herald run against it (ARGS=--local-receivers: webhooks to 127.0.0.1)
	scripts/run-local.sh $(ARGS)

.PHONY: herald
herald: ## Build the herald command into bin/herald
	$(GO) build -o bin/herald ./cmd/herald

.PHONY: deploy-local
deploy-local: ## sam build + sam deploy of template.yaml into the local stack, started if needed (VERBOSE=1: all output; docs/deploy.md)
	scripts/deploy-local.sh

.PHONY: local-up
local-up: ## Start and provision the local stack (stays up until make local-down)
	scripts/local-up.sh

.PHONY: local-down
local-down: ## Stop the local stack
	scripts/local-down.sh

# sam build calls build-<LogicalId> with ARTIFACTS_DIR set (Metadata BuildMethod: makefile).
.PHONY: build-DeliverFunction build-RetentionFunction build-FeedbackFunction build-FanoutFunction build-EndpointsFunction
build-DeliverFunction:
	$(GO_BUILD_LAMBDA) -o $(ARTIFACTS_DIR)/bootstrap ./functions/deliver

build-RetentionFunction:
	$(GO_BUILD_LAMBDA) -o $(ARTIFACTS_DIR)/bootstrap ./functions/retention

build-FeedbackFunction:
	$(GO_BUILD_LAMBDA) -o $(ARTIFACTS_DIR)/bootstrap ./functions/feedback

build-FanoutFunction:
	$(GO_BUILD_LAMBDA) -o $(ARTIFACTS_DIR)/bootstrap ./functions/fanout

build-EndpointsFunction:
	$(GO_BUILD_LAMBDA) -o $(ARTIFACTS_DIR)/bootstrap ./functions/endpoints
