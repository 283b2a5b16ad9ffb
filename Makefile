# Two entry points for a fresh machine (see README): `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The MCP extra is needed by the tests and the type check, not by the demo.
MCP_STAMP := $(VENV)/.installed-mcp

.PHONY: demo test lint typecheck bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

$(MCP_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,mcp,otel,reload]'
	touch $(MCP_STAMP)

demo: $(STAMP)
	$(BIN)/customtools list --path examples/tools
	$(BIN)/customtools run countdown --path examples/tools --params '{"steps": 5, "interval": 0.4}'
	$(BIN)/customtools validate --strict examples/tools

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(MCP_STAMP)
	$(BIN)/mypy

test: lint typecheck $(MCP_STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,mcp,bench]'
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) build dist .mypy_cache .ruff_cache
