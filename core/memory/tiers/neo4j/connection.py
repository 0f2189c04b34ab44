"""The Neo4j tier's connection: the driver (loaded without numpy), causal
bookmarks kept across processes, the plain query runners, and reruns of
what the server aborted for a deadlock.

Fail fast: small connect and acquisition timeouts and no transaction
retries on reads (the driver's defaults wait about 60 s).
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Any

from core.memory.tiers.base import DeadlineExceeded

DEADLOCK_RETRIES = 8  # reruns of a schema statement or write transaction the server aborted for a deadlock


@contextmanager
def without_dataframes():
    """Import the driver without numpy and pandas. The driver imports them if
    they are installed, to accept arrays and data frames as parameters; ARS
    passes neither, and numpy alone was half the driver's import (~180 ms of
    every fresh process with Neo4j configured). Blocked only while the driver
    loads and only if not loaded already: later imports of numpy work."""
    blocked = [m for m in ("numpy", "pandas") if m not in sys.modules]
    for m in blocked:
        sys.modules[m] = None  # type: ignore[assignment]  # "import numpy" raises ImportError
    try:
        yield
    finally:
        for m in blocked:
            if sys.modules.get(m, 0) is None:
                del sys.modules[m]


BOOKMARKS_MAX_AGE = 600.0  # seconds: older bookmarks are long since applied everywhere


def routing_bookmarks_file(uri: str, path: "str | None") -> "str | None":
    """Where a routing (``neo4j://``) store keeps its last write's bookmarks;
    None for ``bolt://`` (one server: every read sees every commit)."""
    return path if path and uri.split(":", 1)[0].startswith("neo4j") else None


def load_bookmarks(path: "str | None") -> list[str]:
    import json
    import os
    import time

    if not path:
        return []
    try:
        if time.time() - os.stat(path).st_mtime > BOOKMARKS_MAX_AGE:
            return []
        data = json.loads(open(path).read())
        return [b for b in data if isinstance(b, str)] if isinstance(data, list) else []
    except (OSError, ValueError):
        return []


def save_bookmarks(path: "str | None", manager) -> None:
    if not path:
        return
    import json

    from core.infra.fsutil import atomic_write

    try:
        values = sorted(str(b) for b in manager.get_bookmarks())
        atomic_write(path, json.dumps(values))
    except Exception:  # noqa: BLE001 - a lost bookmark costs read-your-writes on a cluster, never data
        pass


def again_after_deadlock(fn):
    """``fn()``, run again when the server aborted it for a deadlock. Hosts
    starting together against a new graph create the same constraints and
    indexes at once, and their schema locks deadlock: the server aborts one.
    That is not an outage, but it failed the push and opened the circuit
    breaker, which then held that host's push and pull for its 5 s cooldown,
    again and again while the hosts started (most of the first minute of
    bench/team_sync.py). Rerun after a short random pause instead; other
    errors, and a deadlock that persists, raise. The driver's own retries are
    off (``max_transaction_retry_time=0``: reads must fail fast)."""
    import random
    import time

    from neo4j.exceptions import TransientError

    for attempt in range(DEADLOCK_RETRIES + 1):
        try:
            return fn()
        except TransientError as exc:
            if "Deadlock" not in (exc.code or "") or attempt == DEADLOCK_RETRIES:
                raise
            time.sleep(random.uniform(0.05, 0.25) * (attempt + 1))


def is_transient(exc: BaseException) -> bool:
    """Whether the server refused a transaction for a passing reason (a
    deadlock that outlived its reruns, a lock or memory limit) rather than
    being unreachable: worth retrying, and no reason to open the breaker,
    which would hold this host's push and pull for a whole cooldown."""
    from neo4j.exceptions import TransientError

    return isinstance(exc, TransientError)


class Neo4jConnection:
    """The query runners of a ``Neo4jStore`` (see store.py); every query is in
    this store's namespace (``$ns``) and names episodes as this host does (``$me``)."""

    def _run(self, cypher: str, timeout: float | None = None, write: bool = False, **params: Any) -> list[dict]:
        from neo4j import Query as CypherQuery

        q = CypherQuery(cypher, timeout=timeout)
        params.setdefault("ns", self.namespace)
        params.setdefault("me", self.host)  # named(): this host's own episodes are named by their id
        with self._driver.session(database=self.database, default_access_mode="WRITE" if write else "READ",
                                  bookmark_manager=self._bookmarks) as s:
            return s.run(q, params).data()

    def _rows(self, cypher: str, timeout: float | None = None, **params: Any) -> list[dict]:
        """``_run`` for rows of plain values (no nodes, relationships or paths):
        each record as a dict of the values the driver decoded, without
        ``data()``'s recursive walk over every nested list, which was an eighth
        of a pull's client time."""
        from neo4j import Query as CypherQuery

        params.setdefault("ns", self.namespace)
        params.setdefault("me", self.host)  # named(): this host's own episodes are named by their id
        with self._driver.session(database=self.database, default_access_mode="READ",
                                  bookmark_manager=self._bookmarks) as s:
            result = s.run(CypherQuery(cypher, timeout=timeout), params)
            keys = result.keys()
            return [dict(zip(keys, values)) for values in result.values()]

    def _run_within(self, cypher: str, timeout: float, **params: Any) -> list[dict]:
        """``_run`` with a server-side timeout that reports as a deadline."""
        from neo4j.exceptions import ClientError

        try:
            return self._run(cypher, timeout=timeout, **params)
        except ClientError as exc:
            if "TimedOut" in (exc.code or ""):
                raise DeadlineExceeded(f"neo4j query passed its {timeout * 1000:.0f} ms deadline") from exc
            raise
