"""Shared fixtures: a real Neo4j server for the session, real SQLite files.

Neo4j: ``ARS_NEO4J_URI`` when set (docker compose users), else the embedded
launcher in ``scripts/neo4j``. Under ``CI=true`` a missing Neo4j fails the
tests that need it; elsewhere they skip with a one-line reason.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from core.config import Settings  # noqa: E402
from core.recall import Memory  # noqa: E402


class Neo4jHandle:
    """The session's Neo4j: its URI, and stop/start when the launcher owns it."""

    def __init__(self, uri: str, server=None):
        self.uri = uri
        self.server = server

    def stop(self) -> None:
        if self.server is None:
            pytest.skip("cannot stop an external Neo4j (ARS_NEO4J_URI is set)")
        self.server.stop()

    def start(self) -> None:
        self.server.restart()


@pytest.fixture(scope="session")
def neo4j_server():
    uri = os.environ.get("ARS_NEO4J_URI")
    if uri:
        yield Neo4jHandle(uri)
        return
    try:
        from neo4j_server import Neo4jServer

        server = Neo4jServer()
        server.start()
    except Exception as exc:  # noqa: BLE001
        reason = f"no Neo4j: {' '.join(str(exc).split())[:160]} (run scripts/neo4j/run --fetch-only, or set ARS_NEO4J_URI)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    yield Neo4jHandle(server.uri, server)
    server.stop()


@pytest.fixture
def neo4j_uri(neo4j_server) -> str:
    """A running, empty Neo4j."""
    from core.tiers.neo4j_tier import Neo4jStore

    if neo4j_server.server is not None and neo4j_server.server.proc is None:
        neo4j_server.start()
    store = Neo4jStore(neo4j_server.uri)
    try:
        store.clear()
    finally:
        store.close()
    return neo4j_server.uri


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    d = tmp_path / "state"
    d.mkdir()
    return d


def make_memory(state_dir: Path, **kw) -> Memory:
    return Memory(Settings(state_dir=state_dir, **kw))


@pytest.fixture
def memory(state_dir: Path):
    m = make_memory(state_dir)
    yield m
    m.close()


@pytest.fixture
def memory_neo4j(state_dir: Path, neo4j_uri: str):
    m = make_memory(state_dir, neo4j_uri=neo4j_uri)
    yield m
    m.close()


SAMPLE = ROOT / "samples" / "episodes.jsonl"


def write_episodes(path: Path, rows: list[dict]) -> Path:
    with open(path, "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    return path
