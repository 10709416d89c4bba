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
	# irrCAC, a peer of the statistics tests (Gwet's AC1/AC2, Brennan-Prediger, Conger), pins
	# scipy==1.12.0 (hence numpy < 2) and coverage < 7: as a dev extra it would downgrade NumPy
	# for every test and benchmark. It imports only numpy, scipy and pandas (statsmodels brings
	# them), so it is installed without its pins.
	$(BIN)/python -m pip install --quiet --no-deps 'irrCAC==0.4.4'
	touch $@ $(VENV)/.installed

demo: $(VENV)/.installed
	$(BIN)/auditor demo

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/python tools/check_cycles.py auditor
	$(BIN)/mypy

test: lint
	$(BIN)/python -m pytest

serve: $(VENV)/.installed
	$(BIN)/auditor serve

bench: $(VENV)/.installed-dev
	$(BIN)/python benchmarks/stats.py
	$(BIN)/python benchmarks/ingest.py --lock-rows 3000000
	$(BIN)/python benchmarks/stats_oneshot.py
	$(BIN)/python benchmarks/copy_floor.py
	$(BIN)/python benchmarks/recompute.py
	$(BIN)/python benchmarks/api.py
	$(BIN)/python benchmarks/demo.py

clean:
	rm -rf $(VENV) auditor.db auditor-demo.db* .pytest_cache .ruff_cache test-artifacts
