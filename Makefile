# shardgate — everything a fresh machine needs runs from here.
#   make demo   the main job on embedded defaults (installs terraform 1.5.7 into ./bin first)
#   make test   every test (installs terraform 1.5.7 and OpenTofu 1.12.6 into ./bin first)
#   make bench  speed and memory, whole-process side by side with conftest (installs it into ./bin)

TERRAFORM_VERSION ?= 1.5.7
# OpenTofu, the second binary the runner's real-binary tests and the gate's
# scenarios run on (terraform.binary may point at tofu)
TOFU_VERSION      ?= 1.12.6
# a second terraform: projects pinned to different versions in one
# repository (terraform.binaries) are planned and applied each with its own
TERRAFORM_NEW_VERSION ?= 1.11.4
# conftest, only for the whole-process comparison in `make bench`
CONFTEST_VERSION  ?= 0.71.1
BIN               := $(CURDIR)/bin
TERRAFORM         := $(BIN)/terraform
TOFU              := $(BIN)/tofu
TERRAFORM_NEW     := $(BIN)/terraform-$(TERRAFORM_NEW_VERSION)
CONFTEST          := $(BIN)/conftest
SHARDGATE         := $(BIN)/shardgate
# the demo's own binary: it links the fake GitHub, which the service never does
SHARDGATE_DEMO    := $(BIN)/shardgate-demo
GO                ?= go
GOFLAGS           ?= -buildvcs=false
export GOFLAGS

# Tests and the demo use the terraform this Makefile installed; the tests
# that run on both binaries also use its tofu.
export SHARDGATE_TERRAFORM := $(TERRAFORM)
export SHARDGATE_TOFU      := $(TOFU)
export SHARDGATE_TERRAFORM_NEW := $(TERRAFORM_NEW)

FUZZTIME ?= 30s

.PHONY: all build build-demo tools bench-tools test test-clock test-short race vet fmt fuzz bench bench-process demo demo-check opa-test image clean

all: build

COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)

build:
	$(GO) build -ldflags "-X main.commit=$(COMMIT)" -o $(SHARDGATE) ./cmd/shardgate

## build-demo: ./bin/shardgate-demo, which `shardgate demo` runs from beside ./bin/shardgate
build-demo:
	$(GO) build -o $(SHARDGATE_DEMO) ./cmd/shardgate-demo

## image: the container image (Dockerfile) with docker or podman: IMAGE=name:tag, CONTAINER_TOOL=podman
IMAGE          ?= shardgate:$(or $(shell git describe --tags --always --dirty 2>/dev/null),dev)
CONTAINER_TOOL ?= $(shell command -v docker 2>/dev/null || command -v podman 2>/dev/null)

image:
	@if [ -z "$(CONTAINER_TOOL)" ]; then 		echo "make image: neither docker nor podman is installed: install one, or build the Dockerfile elsewhere" >&2; exit 1; fi
	@if ! command -v "$(CONTAINER_TOOL)" >/dev/null 2>&1; then \
		echo "make image: CONTAINER_TOOL=$(CONTAINER_TOOL) is not found" >&2; exit 1; fi
	@if ! $(CONTAINER_TOOL) info >/dev/null 2>&1; then 		echo "make image: $(CONTAINER_TOOL) is installed but cannot build here ('$(CONTAINER_TOOL) info' fails: is its daemon running and may you reach it?); set CONTAINER_TOOL to another" >&2; exit 1; fi
	$(CONTAINER_TOOL) build --build-arg COMMIT=$(COMMIT) --build-arg TERRAFORM_VERSION=$(TERRAFORM_VERSION) -t $(IMAGE) .
	@echo "built $(IMAGE): docker run $(IMAGE) version"

## tools: install terraform $(TERRAFORM_VERSION), terraform $(TERRAFORM_NEW_VERSION) (as terraform-$(TERRAFORM_NEW_VERSION)) and tofu $(TOFU_VERSION) into ./bin when they are missing
tools: $(TERRAFORM) $(TERRAFORM_NEW) $(TOFU)

# terraform 1.11's module cannot be built from the module proxy (its backends
# are nested modules left out of the download, and its go.mod sets a godebug
# newer Go refuses): take the official build, from PATH when one is there,
# else from releases.hashicorp.com, checked against its SHA256SUMS.
$(TERRAFORM_NEW):
	@mkdir -p $(BIN)
	@set -e; want="Terraform v$(TERRAFORM_NEW_VERSION)"; \
		for d in $$(echo "$$PATH" | tr : ' '); do for c in $$d/terraform-$(TERRAFORM_NEW_VERSION) $$d/terraform; do \
			if [ ! -f $@.tmp ] && [ -x "$$c" ] && [ "$$($$c version 2>/dev/null | head -1)" = "$$want" ]; then cp "$$c" $@.tmp; echo "copied $$c ($$want) to $@"; fi; \
		done; done; \
		if [ ! -f $@.tmp ]; then \
			echo "downloading terraform $(TERRAFORM_NEW_VERSION) from releases.hashicorp.com into $@"; \
			tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; zip=terraform_$(TERRAFORM_NEW_VERSION)_linux_amd64.zip; \
			url=https://releases.hashicorp.com/terraform/$(TERRAFORM_NEW_VERSION); \
			curl -fsSL -o "$$tmp/$$zip" "$$url/$$zip" && curl -fsSL -o "$$tmp/sums" "$$url/terraform_$(TERRAFORM_NEW_VERSION)_SHA256SUMS" || \
				{ echo "cannot download terraform $(TERRAFORM_NEW_VERSION): put its official binary at $@"; exit 1; }; \
			(cd "$$tmp" && grep " $$zip\$$" sums | sha256sum -c -) && unzip -p "$$tmp/$$zip" terraform > $@.tmp && chmod +x $@.tmp; \
		fi
	@$@.tmp version | head -1 | grep -qx "Terraform v$(TERRAFORM_NEW_VERSION)" || { echo "$@ is not terraform v$(TERRAFORM_NEW_VERSION)"; rm -f $@.tmp; exit 1; }
	@mv $@.tmp $@

# build_module builds package $(3) of Go module $(1) at v$(2) into $(4).tmp with
# ldflags $(5), from a writable copy of the module: `go install …@version`
# refuses a module whose go.mod has replace directives (opentofu).
define build_module
set -e; src=$$($(GO) mod download -json $(1)@v$(2) | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$$/\1/p'); \
		test -n "$$src" || { echo "go mod download of $(1) v$(2) gave no directory"; exit 1; }; \
		tmp=$$(mktemp -d); trap 'chmod -R u+w "$$tmp"; rm -rf "$$tmp"' EXIT; \
		cp -R "$$src/." "$$tmp/"; chmod -R u+w "$$tmp"; \
		cd "$$tmp" && $(GO) build -ldflags "$(5)" -o $(4).tmp $(3)
endef

$(TERRAFORM):
	@mkdir -p $(BIN)
	@echo "installing terraform $(TERRAFORM_VERSION) into $(BIN) (a few minutes the first time)"
	GOBIN=$(BIN) $(GO) install github.com/hashicorp/terraform@v$(TERRAFORM_VERSION)
	@$(TERRAFORM) version | head -1 | grep -q "v$(TERRAFORM_VERSION)" || { echo "installed terraform is not v$(TERRAFORM_VERSION)"; exit 1; }

# opentofu's go.mod has a replace directive, so `go install …@version`
# refuses it: build it from a writable copy of its module instead.
$(TOFU):
	@mkdir -p $(BIN)
	@echo "installing tofu $(TOFU_VERSION) into $(BIN) (about ten minutes the first time)"
	@$(call build_module,github.com/opentofu/opentofu,$(TOFU_VERSION),./cmd/tofu,$(TOFU),-X github.com/opentofu/opentofu/version.dev=no)
	@TF_CLI_CONFIG_FILE=/dev/null $(TOFU).tmp version | head -1 | grep -qx "OpenTofu v$(TOFU_VERSION)" || { echo "built tofu is not v$(TOFU_VERSION)"; rm -f $(TOFU).tmp; exit 1; }
	@mv $(TOFU).tmp $(TOFU)

## test: every test, with the real terraform (and PostgreSQL when SHARDGATE_TEST_POSTGRES_URL is set),
## then the tests of the packages with a clock again on fake clocks moved years away (test-clock)
test: tools
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 30m ./...
	@$(MAKE) --no-print-directory test-clock

# The packages whose tests run on fake clocks (internal/fakeclock). test-clock
# runs them again with every fake clock moved by SHARDGATE_FAKECLOCK_SHIFT, so
# that no test holds only on the dates it was written on. bot's and runner's
# tests that run the real terraform dominate their time: shifted, those two
# packages run -short (the tests that need terraform skip, saying so; bot's
# harness needs it, so bot's shifted run is its seams, not its stories).
CLOCK_PACKAGES       := ./internal/fakeclock ./internal/reach ./internal/retry ./internal/loop ./bot/server/livelog \
	./store/... ./bot/approval ./internal/testing/githubtest ./coord/... ./bot/drift ./github/ghapp ./bot/prreport \
	./bot/server/retention ./bot/statuspage ./bot/webhook ./bot/plan ./bot/apply
CLOCK_SHORT_PACKAGES := ./bot ./terraform/runner
CLOCK_SHIFTS         ?= +3y -3y

## test-clock: the tests of CLOCK_PACKAGES with every fake clock shifted by each of CLOCK_SHIFTS
test-clock:
	@set -e; for shift in $(CLOCK_SHIFTS); do \
		echo "== fake clocks shifted $$shift (SHARDGATE_FAKECLOCK_SHIFT)"; \
		SHARDGATE_FAKECLOCK_SHIFT=$$shift $(GO) test -count=1 -timeout 30m $(CLOCK_PACKAGES); \
		SHARDGATE_FAKECLOCK_SHIFT=$$shift $(GO) test -count=1 -short -timeout 30m $(CLOCK_SHORT_PACKAGES); \
	done

## race: every test under the race detector (slower; CI's GitHub workflow runs it)
race: tools
	$(GO) test -count=1 -race -timeout 45m ./...

## test-short: the fast subset: the tests that run the real terraform or build and run
## shardgate processes skip under -short, each saying so (`make test` runs them all)
test-short:
	$(GO) test -count=1 -short ./...

vet:
	$(GO) vet ./...

fmt:
	gofmt -l -w .

## fuzz: run every fuzz target for $(FUZZTIME) each (seed corpora: testdata/ and each package's f.Add seeds)
FUZZ_TARGETS := planparse:FuzzParse planparse:FuzzValueEnd planparse:FuzzSkipValue planparse:FuzzCheckValue \
	bot/webhook:FuzzIntake bot/prcommand:FuzzParseCommands github/ghapp:FuzzExtractTarball \
	policy/repoconfig:FuzzParse
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t#*:}; \
		echo "== $$name ($$pkg)"; \
		$(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) ./$$pkg; \
	done

## bench-tools: install conftest $(CONFTEST_VERSION) into ./bin when it is missing
bench-tools: $(CONFTEST)

$(CONFTEST):
	@mkdir -p $(BIN)
	@echo "installing conftest $(CONFTEST_VERSION) into $(BIN) (about two minutes the first time)"
	GOBIN=$(BIN) $(GO) install github.com/open-policy-agent/conftest@v$(CONFTEST_VERSION)
	@$(GO) version -m $(CONFTEST) | grep -q "mod[[:space:]]*github.com/open-policy-agent/conftest[[:space:]]*v$(CONFTEST_VERSION)" || { echo "installed conftest is not v$(CONFTEST_VERSION)"; exit 1; }

# The whole-process benchmark (cmd/shardgate-bench/): shardgate check vs conftest and the
# simdjson floor (bench/floor.cpp, built with g++ and Debian's libsimdjson-dev) at 1k/10k/50k
# instances, ten groups per stream and one stream per instance, beside `shardgate version`'s
# idle peak; shardgate plan vs raw terraform at 1k. Plans are cached in .bench/.
BENCH_PROCESS = $(GO) run ./cmd/shardgate-bench -repo $(CURDIR) -cache $(CURDIR)/.bench \
	-shardgate $(SHARDGATE) -conftest $(CONFTEST) -terraform $(TERRAFORM)

## bench: speed and memory targets (see docs/performance.md)
bench: build tools bench-tools
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 5x ./planparse ./policy
	$(GO) test -run '^$$' -bench 'BenchmarkEnqueueAt(200|1000)PerSecond' -benchtime 1x ./store
	$(GO) test -run '^$$' -bench 'BenchmarkClaim|BenchmarkEnqueueParallel' -benchtime 3000x -benchmem ./store
	$(GO) test -run '^$$' -bench 'BenchmarkDrain100k' -benchtime 1x -timeout 60m ./store
	$(GO) test -run '^$$' -bench 'BenchmarkIntakeAt200PerSecond' -benchtime 400x ./bot/webhook
	$(GO) test -run '^$$' -bench 'BenchmarkIntakeUnsignedLargeBodies' -benchtime 5x -count 1 ./bot/webhook
	$(GO) test -run '^$$' -bench 'BenchmarkIntakeUnderSlowloris' -benchtime 600x ./bot/webhook
	$(GO) test -run '^$$' -bench 'BenchmarkApplyScheduler' -benchtime 1x ./store/applyqueue
	$(GO) test -run '^$$' -bench 'BenchmarkBrokerOverhead' -benchtime 500x ./coord/coordbroker
	$(GO) test -run '^$$' -bench 'BenchmarkPlanRoundTrip' -benchtime 10x ./bot
	$(GO) test -run '^$$' -bench 'BenchmarkSharedModulePR60|BenchmarkMergeGroup60' -benchtime 1x -timeout 60m ./bot
	$(BENCH_PROCESS)

## bench-process: only the whole-process benchmark of `make bench`
bench-process: build tools bench-tools
	$(BENCH_PROCESS)

## opa-test: the Rego unit tests with the opa CLI itself
opa-test:
	$(GO) run github.com/open-policy-agent/opa test -v rego/

## demo: the whole story on loopback: a PR scales a stream too far (denied), an
## approver's exception and attestation (allowed), merge, apply with the real
## terraform, convergence; prints each version of the PR comment. The story
## is ./bin/shardgate-demo (built here, quietly, so the output stays the
## story), run by `shardgate demo` from beside ./bin/shardgate. It runs only
## terraform, so it installs only terraform: OpenTofu (about ten minutes to
## build) is for `make test`.
demo: $(TERRAFORM) build
	@$(GO) build -o $(SHARDGATE_DEMO) ./cmd/shardgate-demo
	$(SHARDGATE) demo

## demo-check: judge the example plans and print the PR comments shardgate would post
demo-check: build
	@for plan in examples/plans/*.json; do \
		echo "================================================================"; \
		echo "$$ shardgate check --plan $$plan --config examples/.shardgate.yaml --format markdown"; \
		echo "----------------------------------------------------------------"; \
		$(SHARDGATE) check --plan $$plan --config examples/.shardgate.yaml --format markdown; \
		echo "(exit $$?)"; \
	done
	@echo "================================================================"
	@echo "The too-large scale again, after an approver added policy-exception/shard_delta"
	@echo "and attested that the producers of create-order are quiesced:"
	@echo "$$ shardgate check --plan examples/plans/02-scale-too-far.json --config examples/.shardgate.yaml --label policy-exception/shard_delta --attest create-order --format markdown"
	@echo "----------------------------------------------------------------"
	@$(SHARDGATE) check --plan examples/plans/02-scale-too-far.json --config examples/.shardgate.yaml \
		--label policy-exception/shard_delta --attest create-order --format markdown; echo "(exit $$?)"

clean:
	rm -rf $(SHARDGATE) $(SHARDGATE_DEMO) dist
