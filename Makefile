# The README's commands. Each target creates .venv on first use, so a fresh machine with
# Python 3.11 needs nothing else.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin

# Test workers (pytest-xdist): each has its own PostgreSQL database and SQLite template; a
# file's tests stay on one worker (--dist loadfile), and so do the files of a directory with an
# expensive session fixture (tests/conftest.py, SHARED_SESSION_DIRECTORIES).
TEST_WORKERS ?= 2
PYTEST_PARALLEL := -n $(TEST_WORKERS) --dist loadfile
# test-fast: the unit tests and the integration tests on SQLite; no server, no processes. The
# three tests that run the whole 24-day demo are left to `make test` (two of them read one
# shared run, tests/demo_run.py: 99 s of CPU before, 56 s after, at load 6-7).
FAST_TESTS := tests/unit tests/integration -m "not postgres and not redis and not e2e and not browser" \
	--deselect tests/integration/snapshots/test_demo.py::test_demo_is_deterministic_and_shows_the_drop \
	--deselect tests/integration/test_readme.py::test_explore_block_runs_as_printed_after_make_demo \
	--deselect tests/integration/alerts/test_demo_alerts.py::test_demo_fires_on_the_degrading_rater_and_resolves

.PHONY: demo test test-fast lint lint-static serve bench clean

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

lint-static: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/python tools/check_cycles.py auditor

lint: lint-static
	$(BIN)/mypy

# The whole suite, with mypy (minutes of one core, mostly alone) beside the tests instead of
# before them; its report is printed after the tests, and either failing fails the target.
test: lint-static
	@log=$$(mktemp); $(BIN)/mypy >"$$log" 2>&1 & types=$$!; \
	$(BIN)/python -m pytest $(PYTEST_PARALLEL); tests=$$?; \
	wait $$types; typed=$$?; echo "mypy:"; cat "$$log"; rm -f "$$log"; \
	test $$tests -eq 0 && test $$typed -eq 0

# The edit loop: under 3 minutes on the 2-core CI machine.
test-fast: $(VENV)/.installed-dev
	$(BIN)/python -m pytest $(PYTEST_PARALLEL) $(FAST_TESTS)

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
