# The README's commands. Each target creates .venv on first use, so a fresh machine with
# Python 3.11 needs nothing else.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint serve bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@ $(VENV)/.installed

demo: $(VENV)/.installed
	$(BIN)/auditor demo

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/python tools/check_cycles.py auditor

test: lint
	$(BIN)/python -m pytest

serve: $(VENV)/.installed
	$(BIN)/auditor serve

bench: $(VENV)/.installed-dev
	$(BIN)/python benchmarks/stats.py
	$(BIN)/python benchmarks/ingest.py
	$(BIN)/python benchmarks/copy_floor.py
	$(BIN)/python benchmarks/recompute.py
	$(BIN)/python benchmarks/api.py

clean:
	rm -rf $(VENV) auditor.db auditor-demo.db* .pytest_cache .ruff_cache test-artifacts
