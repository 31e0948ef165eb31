# The two commands: `make run` and `make test`. Both set up what they need first.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000
PYTEST_ARGS ?=
# One test worker more than the cores: the browser and event tests spend much of their time
# waiting on paced matches, which left a third of the 2-core machine idle with one per core.
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
# Compiled modules are kept (some shells set PYTHONDONTWRITEBYTECODE): the tests start
# hundreds of Django processes, and each would otherwise compile the project again.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: run test test-fast venv system-deps lint web worker runner migrate bench anchors clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

## Serve the platform on http://$(HOST):$(PORT) (migrates, creates the demo, starts daphne).
## First the sandbox of uploaded code bots (bubblewrap), installed as `make test` installs its
## programs (as root or with passwordless sudo); otherwise it says what to install, and serves.
run: $(STAMP)
	scripts/system-deps --for run
	$(BIN)/python manage.py serve --host $(HOST) --port $(PORT)

## Scale-out components (configure with DATABASE_URL, REDIS_URL, ARENA_RUNNER=celery, ...).
migrate: $(STAMP)
	$(BIN)/python manage.py migrate --noinput

## Behind ARENA_NUM_PROXIES reverse proxies (default one, e.g. nginx): the client's address is
## the X-Forwarded-For entry that many hops from the end (competition/plumbing/ratelimit.py).
ARENA_NUM_PROXIES ?= 1
web: $(STAMP)
	ARENA_PROXY_HEADERS=true ARENA_NUM_PROXIES=$(ARENA_NUM_PROXIES) $(BIN)/python manage.py serve --no-demo --no-migrate --proxy-headers --host $(HOST) --port $(PORT)

WORKER_CONCURRENCY ?= 32
worker: $(STAMP)
	$(BIN)/celery -A competition worker -P threads -c $(WORKER_CONCURRENCY) --loglevel=INFO

runner: $(STAMP)
	$(BIN)/python manage.py runmatches

## The system programs the tests start (Chromium, Redis, PostgreSQL, Node.js...): installed
## with apt-get when missing (as root or with passwordless sudo), else one clear message.
system-deps:
	scripts/system-deps

## Run the whole test suite, after the linter, the formatter's check and the import contracts
## (pyproject.toml [tool.importlinter]: the layers, no cycles): first the few tests that measure
## the whole host (marked alone), on their own, then every other test in parallel (its 15
## slowest named at the end: where the suite's time goes).
test: system-deps $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -q -m alone $(PYTEST_ARGS)
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup -q -m "not alone" --durations=15 $(PYTEST_ARGS)

## The inner loop while developing: the same without the slow tests (make test runs them all).
test-fast: system-deps $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -n auto --dist loadgroup -q -m "not slow" $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

bench: $(STAMP)
	$(BIN)/python bench/engines.py
	$(BIN)/python bench/moves.py
	$(BIN)/python bench/overhead.py
	$(BIN)/python bench/aggregate.py

## The anchors the benchmarks compare against (not needed to run or test the platform):
## OpenSpiel, NumPy, SciPy and kaggle-environments 1.14.15, the last release with tictactoe
## (without its dependencies: torch, transformers... are not needed for tictactoe), and the
## HTTP clients bench/clients.py measures against aiohttp (uvloop, pyreqwest, aiosonic, httpx).
anchors: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	$(BIN)/python -m pip install --quiet --no-deps 'kaggle-environments==1.14.15'

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
