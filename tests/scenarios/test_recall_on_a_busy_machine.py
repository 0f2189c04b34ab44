"""Recall on a busy machine with Neo4j configured but unreachable: a fresh `ars
recall` process sets itself up before any tier's clock starts, so SQLite answers
inside its deadline, also beside two agents' worth of CPU load. Real processes."""

from __future__ import annotations

import subprocess
from contextlib import contextmanager
from pathlib import Path

import pytest

from loophelp import ars
from statehelp import closed_port, seeded, tiers_of  # noqa: F401 - seeded: the fixture


@contextmanager
def busy_loops(n: int = 2):
    """Two agents' worth of CPU load beside the test, as a user's machine has."""
    procs = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(n)]
    try:
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


def test_fresh_recall_with_neo4j_configured_keeps_sqlite(seeded: Path):
    """A fresh process asked for Neo4j imports its driver (~300 ms) before any tier's
    clock starts: SQLite answers inside a deadline far shorter than that."""
    env = {"ARS_NEO4J_URI": f"bolt://127.0.0.1:{closed_port()}", "ARS_SQLITE_DEADLINE": "0.1"}
    r = ars("recall", "Neo4j outage", "--tiers", "neo4j,sqlite", "--json", state=seeded, env=env)
    assert r.returncode == 0, r.stderr
    tiers = tiers_of(r.stdout)
    assert tiers["sqlite"] == "ok" and tiers["neo4j"] in ("down", "timeout")


@pytest.mark.timeout_budget
def test_fresh_recalls_beside_busy_loops_never_lose_sqlite(seeded: Path):
    env = {"ARS_NEO4J_URI": f"bolt://127.0.0.1:{closed_port()}"}
    statuses = []
    with busy_loops():
        for _ in range(6):
            r = ars("recall", "Neo4j outage", "--json", state=seeded, env=env)
            assert r.returncode == 0, r.stderr
            statuses.append(tiers_of(r.stdout)["sqlite"])
    assert statuses == ["ok"] * 6
