"""Warming a recall path before anyone waits on it (the recall daemon, at start).

A Neo4j JVM just started answers a new query shape in hundreds of ms until it has
compiled it, so the warm-up recall is repeated, at most ``rounds`` times, until Neo4j
answers inside half its read deadline; SQLite's statistics are read by the same recall.
Standing by (``ARS_NEO4J_RECALL=standby``, core/memory/recall.py) Neo4j is not in that
recall, so one round does: its query is planned (``Neo4jStore.warm``) and nothing more.
Warming it round after round by name would hold the daemon back (on a server just
started, a daemon that did was ready 10 s after start at a million; without those rounds,
3.7 s), and until the daemon is ready each turn's hook answers by itself, too slowly for
its deadline; a fallback that finds Neo4j slower than usual is already the degraded case.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.memory.memory import Memory


def warm_up(memory: "Memory", deadline: float = 10.0, rounds: int = 12) -> None:
    """Pay a first recall's costs (the Neo4j connection and its query plan, SQLite's
    statistics) with each tier's deadline raised to at least ``deadline`` s."""
    saved = dict(memory.deadlines)
    memory.deadlines = {t: max(v, deadline) for t, v in saved.items()}
    try:
        if memory.neo4j is not None:
            memory.neo4j.warm()
        for _ in range(rounds):
            neo = memory.recall("warm up", k=1).tier("neo4j")
            slow = neo is not None and neo.status in ("ok", "empty") \
                and neo.latency_ms > saved.get("neo4j", 0.0) * 500  # half the read deadline
            if not slow:
                break
    finally:
        memory.deadlines = saved
