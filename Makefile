# The README's two commands: `make run` and `make test`. Both create .venv and install
# what they need, so a fresh clone needs nothing else.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# torch is pinned to the CPU build that lies on this machine's disk (no multi-GB CUDA download);
# the `probe` extra itself accepts any torch >= 2.3.
TORCH  ?= torch==2.13.0
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: run test lint typecheck pytest bench clean lock k8s-catalogs

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.run-deps: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e .
	touch $@

$(VENV)/.test-deps: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q "$(TORCH)"
	$(BIN)/pip install -q -e ".[dev,probe,refresh]"
	touch $@ $(VENV)/.run-deps

run: $(VENV)/.run-deps
	$(BIN)/recommender serve --host $(HOST) --port $(PORT)

lint: $(VENV)/.test-deps
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(VENV)/.test-deps
	$(BIN)/mypy

# One worker per core (pytest-xdist): the suite is CPU-bound; on two cores 476 s -> ~300 s.
pytest: $(VENV)/.test-deps
	$(BIN)/pytest -q -n auto

test: lint typecheck pytest

# The hash-pinned lock files the images install from (deploy/lock/); `make lock` refreshes
# them to the newest versions pyproject.toml allows. make's own venv does not use them.
LOCK_FLAGS := --generate-hashes --universal --python-version 3.11 --upgrade --quiet \
	--custom-compile-command "make lock"

lock: $(VENV)/.test-deps
	$(BIN)/uv pip compile pyproject.toml --extra postgres $(LOCK_FLAGS) -o deploy/lock/service.txt
	$(BIN)/uv pip compile pyproject.toml --extra postgres --extra refresh $(LOCK_FLAGS) -o deploy/lock/refresh.txt
	$(BIN)/uv pip compile pyproject.toml deploy/lock/probe.in $(LOCK_FLAGS) -o deploy/lock/probe.txt
	$(BIN)/uv pip compile deploy/lock/build.in $(LOCK_FLAGS) -o deploy/lock/build.txt

# kustomize reads no file above its directory: the catalogs ConfigMap is generated from a copy.
k8s-catalogs:
	deploy/k8s/fill-catalogs.sh catalogs deploy/k8s/base/catalogs

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
