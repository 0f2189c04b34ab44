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
# The tests live in folders mirroring the code (tests/core/..., tests/tui/...,
# tests/scenarios/) with no __init__.py: pytest's default "prepend" import mode
# imports each test module by its basename, so basenames stay unique across
# folders (pytest refuses a duplicate). The shared helpers (tuihelp, loophelp,
# agent_run, cdp, statehelp, agents_stub) and this conftest stay here and are
# imported by name from every folder: tests/ is on sys.path. The real `core` and
# `tui` packages still win over the folders tests/core and tests/tui (a package
# with __init__.py beats a namespace directory, and pyproject's pythonpath puts the
# repository root on sys.path even for a bare `pytest`).
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
# Fresh `ars recall --json` processes leave a warm recall daemon behind
# (tui/daemon/); the suite's hundreds of temporary state directories must not
# each keep one for ten minutes. tests/tui/daemon/test_recall_daemon.py turns it on where
# it is the subject; helpers that drop ARS_* from a child's environment keep
# this one.
os.environ["ARS_RECALL_DAEMON"] = "off"


def passphrase_socket(passphrase: str, after: bytes = b"") -> int:
    """The read end of a socket holding ``passphrase`` and a newline (then ``after``), as a
    supervisor's script passes it to ``--passphrase-fd N`` (a pipe is refused: any process of
    the user can read a pipe through /proc first; a socket cannot be opened there)."""
    import socket

    a, b = socket.socketpair()
    b.sendall(passphrase.encode() + b"\n" + after)
    b.close()
    return a.detach()


class passphrase_pipe:
    """The supervisor's passphrase on a socket, as `--passphrase-fd N` reads it: ``args`` to
    add to the command line and ``fds`` to pass to the child (closed on leaving)."""

    def __init__(self, passphrase: str | None):
        self.args: list[str] = []
        self.fds: tuple[int, ...] = ()
        if passphrase is not None:
            r = passphrase_socket(passphrase)
            self.args, self.fds = ["--passphrase-fd", str(r)], (r,)

    def __enter__(self) -> "passphrase_pipe":
        return self

    def __exit__(self, *exc) -> None:
        for fd in self.fds:
            os.close(fd)


def env_without_ars(prefixes: tuple[str, ...] = ("ARS_",)) -> dict[str, str]:
    """This environment for a child process, without the ARS_* settings (or other
    ``prefixes``) a developer's shell may hold, but keeping the suite's
    ``ARS_RECALL_DAEMON=off``."""
    return {k: v for k, v in os.environ.items() if not k.startswith(prefixes) or k == "ARS_RECALL_DAEMON"}
sys.path.insert(0, str(ROOT / "scripts"))

from core.config import Settings  # noqa: E402
from core.memory.memory import Memory  # noqa: E402


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
        warm_up(self.uri, read_only=True)  # keep what the test stored before the outage


WARM_QUERIES = ["Neo4j outage recall", "Alice weekly plan", "第一性原理", "部署回滚 backfill", "dashboard approvals",
                "what did Bob own", "SQLite store of record", "用户偏好 总结"]


def warm_up(uri: str, read_only: bool = False) -> None:
    """Run the search path until the JVM has compiled it.

    A fresh Neo4j JVM answers its first queries of a new shape in hundreds of
    ms (interpreted code, cold plans); tests assert behaviour under the real
    read deadlines, so they start from a server in its steady state, as a
    long-running server is.
    """
    import tempfile

    from core.ingest.pipeline import ingest

    with tempfile.TemporaryDirectory() as tmp:
        mem = Memory(Settings(state_dir=Path(tmp), neo4j_uri=uri))
        try:
            mem.deadlines = {t: 30.0 for t in mem.deadlines}
            if not read_only:
                ingest(mem, [SAMPLE])
            for _ in range(15):
                for q in WARM_QUERIES:
                    mem.recall(q, k=5, tiers="neo4j")
            if not read_only:
                mem.neo4j.clear()
        finally:
            mem.close()


@pytest.fixture(scope="session")
def neo4j_server():
    uri = os.environ.get("ARS_NEO4J_URI")
    if uri:
        warm_up(uri)
        yield Neo4jHandle(uri)
        return
    try:
        from neo4j_server import Neo4jServer

        server = Neo4jServer()
        server.start()
        warm_up(server.uri)
    except Exception as exc:  # noqa: BLE001
        reason = f"no Neo4j: {' '.join(str(exc).split())[:160]} (run scripts/neo4j/run --fetch-only, or set ARS_NEO4J_URI)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    yield Neo4jHandle(server.uri, server)
    server.close()


@pytest.fixture
def neo4j_uri(neo4j_server) -> str:
    """A running, empty Neo4j."""
    from core.memory.tiers.neo4j import Neo4jStore

    if neo4j_server.server is not None and not neo4j_server.server.running:
        neo4j_server.start()  # a test that stopped it failed before restarting
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


# Functional tests run with roomy deadlines so a loaded 2-core machine cannot
# turn a slow answer into a flaky failure; tests about deadlines set their own.
TEST_DEADLINES = {"neo4j_deadline": 3.0, "sqlite_deadline": 3.0, "files_deadline": 3.0, "dense_deadline": 3.0}


def make_memory(state_dir: Path, **kw) -> Memory:
    return Memory(Settings(state_dir=state_dir, **{**TEST_DEADLINES, **kw}))


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


def push_at_once(hosts) -> dict:
    """Every host's ``sync.run`` at the same moment, one thread each; their reports by host id."""
    import threading

    reports: dict = {}

    def push(m):
        reports[m.identity.host] = m.sync.run(retries=0, max_events=50)

    threads = [threading.Thread(target=push, args=(m,)) for m in hosts]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    return reports
