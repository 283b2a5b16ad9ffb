# Two entry points for a fresh machine (see README): `make demo` and `make test`.
# The test environment is pinned: `make test` installs from requirements/test.lock (a pip
# constraints file, build backend included); `make lock` refreshes it from the newest versions
# the ranges in pyproject.toml allow. `make test-newest` and `make test-lowest` try the two
# ends of those ranges (docs/development.md says when and what to do when they break).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
LOCK ?= requirements/test.lock
# The extras the test suite and the type check need (the demo needs none of them): the MCP
# bridge and its shared state on Redis, telemetry, hot reload and the framework adapters.
TEST_EXTRAS := dev,mcp,redis,otel,reload,cache,pydantic-ai,langchain,openai-agents
LOCK_EXTRAS := $(TEST_EXTRAS),bench
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

.PHONY: demo test lint typecheck pytest bench lock test-newest test-lowest clean

# Each stamp installs in one pip run: the test environment does not first install the package
# alone (that built and installed it twice), and it satisfies the demo's stamp too.
# uv installs (one download in parallel, no rebuilt wheels): the test environment took 53 s
# with pip and a warm cache, 14 s with uv and an empty one. pip itself stays pinned in the venv.
define NEW_VENV
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet $(if $(LOCK),-c $(LOCK)) uv
endef
UV_INSTALL = $(BIN)/uv pip install --quiet --python $(BIN)/python $(if $(LOCK),-c $(LOCK) --build-constraints $(LOCK)) pip

$(STAMP): pyproject.toml $(LOCK)
	$(if $(wildcard $(BIN)/python),,$(NEW_VENV))
	$(UV_INSTALL) -e .
	touch $(STAMP)

$(TEST_STAMP): pyproject.toml $(LOCK)
	$(if $(wildcard $(BIN)/python),,$(NEW_VENV))
	$(UV_INSTALL) -e '.[$(TEST_EXTRAS)]'
	touch $(STAMP) $(TEST_STAMP)

demo: $(STAMP)
	$(BIN)/customtools list --path examples/tools
	$(BIN)/customtools run countdown --path examples/tools --params '{"steps": 5, "interval": 0.4}'
	$(BIN)/customtools validate --strict examples/tools

lint: $(TEST_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(TEST_STAMP)
	$(BIN)/mypy

# The suite runs in parallel processes (pytest-xdist), mypy beside it. Three workers on two
# cores: since the tests' servers fork from a preloaded interpreter (tests/zygote.py) the
# suite waits more than it computes, and a third worker fills those waits (a fresh clone took
# 321 s with three, 352 s with two); docs/development.md has the measurements and the rules a
# test follows to be safe in parallel. Bytecode is written even where the environment says
# not to (PYTHONDONTWRITEBYTECODE): the hundreds of Python subprocesses the suite starts
# would otherwise each compile the package again.
PYTEST_WORKERS ?= 3
PYTEST_ARGS ?= -n $(PYTEST_WORKERS)

pytest: $(TEST_STAMP)
	CUSTOMTOOLS_LOCK=$(LOCK) PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest $(PYTEST_ARGS)

# Lint first (seconds); then the type check runs beside the tests, on the CPU their waits leave.
# (mypy prints a line or two at its end; pytest's progress streams as it runs.)
test: lint
	$(MAKE) --no-print-directory -j2 typecheck pytest

# Runs every benchmark and rewrites the figures of docs/performance.md from their output
# (BENCH_ARGS=--quick for fewer repetitions, BENCH_ARGS="--only load" for one block).
BENCH_ARGS ?=
bench: $(STAMP)
	$(UV_INSTALL) -e '.[$(LOCK_EXTRAS)]'
	$(BIN)/python benchmarks/run.py --write-docs $(BENCH_ARGS)

# Refresh the pinned set: a throwaway environment with the newest allowed versions, frozen.
lock:
	rm -rf .venv-lock
	$(PYTHON) -m venv .venv-lock
	.venv-lock/bin/python -m pip install --quiet --upgrade pip
	.venv-lock/bin/python -m pip install --quiet hatchling uv -e '.[$(LOCK_EXTRAS)]'
	$(PYTHON) scripts/lock.py .venv-lock > requirements/test.lock.new
	mv requirements/test.lock.new requirements/test.lock
	rm -rf .venv-lock

# The whole `make test` on the newest versions the ranges allow (nothing pinned).
test-newest:
	rm -rf .venv-newest
	$(MAKE) test VENV=.venv-newest LOCK=

# The test suite on the lowest versions pyproject.toml allows for each direct dependency
# (uv's lowest-direct resolution: pip has none).
test-lowest:
	rm -rf .venv-lowest
	$(PYTHON) -m venv .venv-lowest
	.venv-lowest/bin/python -m pip install --quiet uv
	.venv-lowest/bin/uv pip install --quiet --python .venv-lowest/bin/python \
		--resolution lowest-direct -e '.[$(TEST_EXTRAS)]'
	.venv-lowest/bin/python -m pytest $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) .venv-newest .venv-lowest .venv-lock build dist .mypy_cache .ruff_cache
