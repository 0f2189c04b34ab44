# Two entry points (README): `make demo` and `make test`. Each sets up what it needs.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
SAMPLE  := samples/episodes.jsonl
DEMO_STATE ?= state

.PHONY: demo test install neo4j-jars clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q -U pip
	$(BIN)/pip install -q -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

neo4j-jars:
	scripts/neo4j/run --fetch-only

# Until the dashboard lands: ingest the bundled sample and run two recalls.
demo: install
	$(BIN)/ars ingest $(SAMPLE) --state $(DEMO_STATE)
	$(BIN)/ars recall "neo4j outage recall" --state $(DEMO_STATE)
	$(BIN)/ars recall "第一性原理 检查" --state $(DEMO_STATE)

test: install neo4j-jars
	$(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) .pytest_cache
