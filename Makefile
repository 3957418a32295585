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

.PHONY: run test lint typecheck pytest bench clean

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

pytest: $(VENV)/.test-deps
	$(BIN)/pytest -q

test: lint typecheck pytest

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
