"""The Neo4j breaker shared by processes (neo4j-breaker.json in the state
directory): a process with its answer does not wait for a black-holed Neo4j, a
Neo4j found down is skipped by the next processes until the cooldown's probe,
and the breaker closes when Neo4j answers. Real processes. Neo4j is asked by
name (``--tiers neo4j,sqlite``): a recall without tiers leaves it standing by
while SQLite answers, and asks it, through the same breaker, when SQLite cannot."""

from __future__ import annotations

import json
import socket
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from loophelp import ars
from statehelp import closed_port, seeded, tiers_of  # noqa: F401 - seeded: the fixture


BOTH = ("--tiers", "neo4j,sqlite")


@contextmanager
def black_hole():
    """A TCP port that accepts connections and never answers."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    held: list = []
    stop = threading.Event()

    def accept() -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(srv.accept()[0])
            except OSError:
                continue

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    try:
        yield srv.getsockname()[1]
    finally:
        stop.set()
        t.join()
        for c in held:
            c.close()
        srv.close()


def test_a_process_with_its_answer_does_not_wait_for_a_black_holed_neo4j(seeded: Path):
    with black_hole() as port:
        env = {"ARS_NEO4J_URI": f"bolt://127.0.0.1:{port}", "ARS_NEO4J_CONNECT_TIMEOUT": "600"}
        # a process that waited for the driver's connect would hang for 10 minutes: the guard fails it
        r = ars("recall", "Neo4j outage", "--tiers", "neo4j,sqlite", "--json", state=seeded, env=env, timeout=60)
        standing_by = ars("recall", "Neo4j outage", "--json", state=seeded, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    tiers = tiers_of(r.stdout)
    assert tiers["neo4j"] == "timeout" and tiers["sqlite"] == "ok"
    # without tiers: SQLite answers, and the black hole is not asked at all
    assert tiers_of(standing_by.stdout)["neo4j"] == "skipped" and not json.loads(standing_by.stdout)["degraded"]


def test_a_neo4j_found_down_is_skipped_by_the_next_processes(seeded: Path):
    env = {"ARS_NEO4J_URI": f"bolt://127.0.0.1:{closed_port()}", "ARS_NEO4J_BREAKER_COOLDOWN": "600"}
    first = json.loads(ars("recall", "Neo4j outage", *BOTH, "--json", state=seeded, env=env).stdout)
    assert first["tiers"][0]["status"] == "down" and "circuit open" not in first["tiers"][0]["error"]
    second = json.loads(ars("recall", "Neo4j outage", *BOTH, "--json", state=seeded, env=env).stdout)
    neo = second["tiers"][0]
    assert neo["status"] == "down" and neo["error"].startswith("circuit open: Neo4j failed")
    assert second["degraded"] and tiers_of(json.dumps(second))["sqlite"] == "ok"
    # the cooldown over, the next process is the probe: it asks Neo4j again
    path = seeded / "neo4j-breaker.json"
    d = json.loads(path.read_text())
    path.write_text(json.dumps({**d, "until": 0}))
    third = json.loads(ars("recall", "Neo4j outage", *BOTH, "--json", state=seeded, env=env).stdout)
    assert third["tiers"][0]["status"] == "down" and "circuit open" not in third["tiers"][0]["error"]
    assert json.loads(path.read_text())["until"] > time.time() + 500


@pytest.mark.neo4j
def test_the_shared_breaker_closes_when_neo4j_answers(seeded: Path, neo4j_uri: str):
    path = seeded / "neo4j-breaker.json"
    path.write_text(json.dumps({"open": True, "since": time.time() - 60, "until": 0, "error": "was down"}))
    r = ars("recall", "Neo4j outage", *BOTH, "--json", state=seeded, env={"ARS_NEO4J_URI": neo4j_uri,
                                                                    "ARS_NEO4J_DEADLINE": "5"})
    assert tiers_of(r.stdout)["neo4j"] in ("ok", "empty"), r.stdout
    assert not path.exists()
