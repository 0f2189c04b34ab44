"""The pull: the namespace's episodes written by other hosts, from Neo4j into
this host's SQLite, so that with the graph down this host still recalls the
whole team's memory up to its last pull.

One cursor per other host (``pull_cursor`` in ``memory.sqlite``, see
``local.py``), moved in the transaction that stores the page it read: a crash
replays at most a page, and a replayed page changes nothing (upserts by id).
A host's episodes come in the order it pushed them (``seq``: the ledger
offset it pushed them from), so a later version of an episode arrives later
and wins. The raw files tier stays local: only episodes travel. Pulled
episodes are never pushed back (they are not in this host's ledger).
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Iterator

from pydantic import BaseModel, ValidationError

from ..models import Episode
from ..prefetch import prefetch
from ..tiers.base import one_line
from ..tiers.neo4j_tier import is_transient
from . import graph, local

if TYPE_CHECKING:
    from ..recall import Memory

PAGE = 2000  # episodes per read (and per SQLite transaction)
ENTITY_TYPES = {"person", "agent", "product", "project", "file", "tool", "technology",
                "channel", "concept", "endpoint", "command"}


class PullReport(BaseModel):
    pulled: int = 0
    hosts: dict[str, int] = {}  # other host -> episodes pulled from it this run
    skipped: int = 0  # rows that were not valid episodes, or this host's own
    ok: bool = True
    error: str = ""
    caught_up: bool = False  # every other host read to its end (not stopped by max_seconds)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def to_episode(row: dict[str, Any], host: str, namespace: str) -> Episode:
    prev = row.get("prev")
    return Episode.model_validate({
        "id": row["id"], "source": row.get("source") or "manual", "session_id": row.get("session_id") or "",
        "agent": row.get("agent") or "", "channel": row.get("channel") or "", "summary": row.get("summary") or "",
        "text": row.get("text") or "", "topics": list(row.get("topics") or []),
        "entities": [{"name": n, "type": t if t in ENTITY_TYPES else "concept"}
                     for n, t in (row.get("entities") or []) if n],
        "first_ts": row.get("first_ts"), "last_ts": row.get("last_ts"),
        "message_count": row.get("message_count") or 0,
        "meta": {"prev": prev} if prev else {},
        "namespace": namespace, "host": host,
    })


def _pages(store, todo: dict[str, tuple[int, str]], page: int) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """(host, rows) pages of every host in ``todo`` (host -> its cursor), one
    page of each in turn, until each is caught up: the hosts share a pull's
    time instead of the first in name order taking all of it."""
    todo = dict(todo)
    while todo:
        for name in list(todo):
            seq, last = todo[name]
            rows = graph.page(store, name, seq, last, page)
            if rows:
                todo[name] = (rows[-1]["seq"], rows[-1]["id"])
                yield name, rows
            if len(rows) < page:
                del todo[name]


def pull(memory: "Memory", max_seconds: float = 60.0, page: int = PAGE) -> PullReport:
    """Pull every other host's new episodes (until caught up or ``max_seconds``)."""
    report = PullReport()
    store = memory.neo4j
    if store is None:
        report.ok, report.error = False, "neo4j is not configured (set ARS_NEO4J_URI)"
        return report
    me = memory.identity
    sqlite = memory.sqlite
    until = time.monotonic() + max_seconds
    try:
        store.breaker.before_call()
        todo: dict[str, tuple[int, str]] = {}
        for h in graph.hosts(store, me.host):
            seq, last = local.cursor(sqlite.team(), h["name"])
            if h["seq"] is not None and seq > h["seq"]:
                continue  # nothing after the cursor (or a graph rebuilt behind it: ars sync pull --reset)
            todo[h["name"]] = (seq, last)
        # the next page is read while this one is stored (the read waits on the
        # server, the store is this host's CPU); the cursor that counts is the
        # one stored with each page, so a page read ahead and dropped is only re-read
        pages = prefetch(_pages(store, todo, page), name="ars-pull-read")
        try:
            report.caught_up = True
            for name, rows in pages:
                report.pulled += _store(sqlite, me, name, rows, report)
                if time.monotonic() >= until:
                    report.caught_up = False
                    break
        finally:
            pages.close()
        store.breaker.success()
    except Exception as exc:  # noqa: BLE001 - reported; the cursors hold what was stored
        if not is_transient(exc):
            store.breaker.failure(one_line(exc))
        report.ok, report.error = False, one_line(exc)
    return report


def _store(sqlite, me, name: str, rows: list[dict[str, Any]], report: PullReport) -> int:
    """One page of ``name``'s episodes into SQLite, with its cursor, in one transaction."""
    eps = []
    for r in rows:
        try:
            eps.append(to_episode(r, name, me.namespace))
        except (ValidationError, ValueError, TypeError):
            report.skipped += 1
    own = local.own_ids(sqlite.team(), [e.id for e in eps], me)
    if own:
        report.skipped += len(own)
        eps = [e for e in eps if e.id not in own]
    seq, last = rows[-1]["seq"], rows[-1]["id"]
    # the index terms the writing host stored with each episode
    terms = {r["id"]: r["terms"] for r in rows if isinstance(r.get("terms"), str)}
    sqlite.upsert(eps, [f"pull:{name}:{seq}"] * len(eps), terms=terms,
                  also=lambda c: local.move_cursor(c, name, seq, last, len(eps), _now()))
    report.hosts[name] = report.hosts.get(name, 0) + len(eps)
    return len(eps)


def reset(memory: "Memory") -> None:
    """Forget the pull cursors: the next pull reads every other host's episodes
    again (after the graph was rebuilt, or to backfill a new host)."""
    conn = memory.sqlite.team()
    with conn:
        conn.execute("DELETE FROM pull_cursor")


def status(memory: "Memory") -> dict[str, Any]:
    """Per host of the namespace: episodes in the graph, here, and the lag."""
    me = memory.identity
    here = local.counts_by_host(memory.sqlite.team(), me)
    cur = local.cursors(memory.sqlite.team())
    out: dict[str, Any] = {}
    store = memory.neo4j
    there: dict[str, int] | None = None
    if store is not None:
        try:
            store.breaker.before_call()
            there = graph.counts(store)
            store.breaker.success()
        except Exception as exc:  # noqa: BLE001
            store.breaker.failure(one_line(exc))
            there = None
    names = set(here) | set(there or {}) | set(cur)
    names.discard("")
    for name in sorted(names):
        g = (there or {}).get(name)
        n = here.get(name, 0)
        row: dict[str, Any] = {"graph": g, "local": n}
        if name == me.host:
            row["self"] = True
        else:
            row["lag"] = None if g is None else max(g - n, 0)
            row["last_pull"] = (cur.get(name) or {}).get("at")
        out[name] = row
    if there and there.get(""):
        out["(no host)"] = {"graph": there[""], "local": None,
                            "note": "written before hosts were recorded: run ars sync backfill on the host that wrote them"}
    return out
