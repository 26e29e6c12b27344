# Everything a developer or CI does goes through these targets.
# `make test` works from a fresh clone: it installs, builds the upstream binaries when the
# cache lacks them (a one-time, tens-of-minutes step), lints, type checks and runs every tier.

PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PROTO_STAMP := services/simkube/gen/.generated
PROTOS := $(shell find proto -name '*.proto' 2>/dev/null)

.PHONY: install proto binaries lint typecheck test test-unit test-integration test-e2e \
	test-autoscaler fuzz bench demo demo-compare clean

install: $(STAMP) $(PROTO_STAMP)

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found; install Python 3.11" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

proto: $(STAMP)
	$(BIN)/python tools/genproto.py

$(PROTO_STAMP): $(STAMP) $(PROTOS) tools/genproto.py
	$(BIN)/python tools/genproto.py

binaries: install
	$(BIN)/skctl env build

lint: install
	$(BIN)/ruff check services tests tools benchmarks

typecheck: install
	$(BIN)/mypy

# The autoscaler tier needs a Cluster Autoscaler binary, which this project's registries cannot
# provide (see README); `make test-autoscaler` runs it with SIMKUBE_CLUSTER_AUTOSCALER set.
test: install binaries lint typecheck
	$(BIN)/pytest -m "not autoscaler" tests

test-unit: install
	$(BIN)/pytest -m unit tests

test-integration: binaries
	$(BIN)/pytest -m integration tests

test-e2e: binaries
	$(BIN)/pytest -m e2e tests

test-autoscaler: binaries
	$(BIN)/pytest -m autoscaler tests

# `make test` fuzzes a fixed corpus of seeds (the same inputs every run). This searches new
# ones: the trace fuzzer tries random seeds for FUZZ_SECONDS and lists each finding's seed (add
# it to REGRESSIONS in tests/unit/trace/test_fuzz_readers.py once fixed); Hypothesis tests
# draw random examples. -s shows findings as they come; the test timeout grows with the budget.
FUZZ_SECONDS ?= 300
fuzz: install
	SIMKUBE_FUZZ_SECONDS=$(FUZZ_SECONDS) SIMKUBE_HYPOTHESIS_PROFILE=random \
		$(BIN)/pytest -m unit -s --timeout=$$(( $(FUZZ_SECONDS) + 600 )) tests/unit/trace

bench: install binaries
	$(BIN)/python -m benchmarks

# The demo builds what it runs itself, first and alone (Karpenter, or not when
# SIMKUBE_CLUSTER_AUTOSCALER names a CA binary), so a fresh clone waits for nothing else.
demo: install
	$(BIN)/python -m simkube.skctl.demo

# Cluster Autoscaler and Karpenter on one recorded trace, compared (Karpenter alone without a
# CA binary: set SIMKUBE_CLUSTER_AUTOSCALER=PATH for both); see docs/autoscalers.md.
demo-compare: install binaries
	$(BIN)/skctl study autoscalers --trace tests/data/recorded/fidelity-3min.trace \
		--speed 20 --tail 12m --output demo-out/compare

clean:
	rm -rf $(VENV) services/simkube/gen .mypy_cache .ruff_cache .pytest_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
