# herald — make help lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

GO        ?= go
GOARCH_LAMBDA ?= arm64
BIN       := bin

.PHONY: help
help: ## List the targets
	@awk 'BEGIN{FS=":.*## "} /^[a-zA-Z_%-]+:.*## /{printf "  %-16s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build the Lambda bootstraps (linux/arm64) into bin/<function>/bootstrap
	@for fn in deliver retention; do \
	  CGO_ENABLED=0 GOOS=linux GOARCH=$(GOARCH_LAMBDA) $(GO) build -trimpath -tags lambda.norpc -ldflags='-s -w' -o $(BIN)/$$fn/bootstrap ./functions/$$fn || exit 1; \
	done

# sam build calls build-<LogicalId> with ARTIFACTS_DIR set (BuildMethod: makefile).
build-DeliverFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build -trimpath -tags lambda.norpc -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/deliver

build-RetentionFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build -trimpath -tags lambda.norpc -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/retention
