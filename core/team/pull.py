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
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from ..models import Episode
from ..tiers.base import one_line
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
        for h in graph.hosts(store, me.host):
            name = h["name"]
            seq, last = local.cursor(sqlite.team(), name)
            if h["seq"] is not None and seq > h["seq"]:
                continue  # nothing after the cursor (or a graph rebuilt behind it: ars sync pull --reset)
            while time.monotonic() < until:
                rows = graph.page(store, name, seq, last, page)
                if not rows:
                    break
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
                              also=lambda c, s=seq, i=last, n=len(eps), h=name: local.move_cursor(c, h, s, i, n, _now()))
                report.pulled += len(eps)
                report.hosts[name] = report.hosts.get(name, 0) + len(eps)
                if len(rows) < page:
                    break
        store.breaker.success()
    except Exception as exc:  # noqa: BLE001 - reported; the cursors hold what was stored
        store.breaker.failure(one_line(exc))
        report.ok, report.error = False, one_line(exc)
    return report


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
