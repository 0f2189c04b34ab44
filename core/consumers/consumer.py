"""What a deferred consumer is, and the report of a sync run.

A consumer derives a store from the ledger (or, for the team pull, from the
graph) after the write that acknowledged it, at its own pace, from its own
cursor. Each takes (ledger, stores, cursor) — the ledger it reads, the stores
of the state directory (core/memory/stores.py), the cursor it keeps
(core/ledger/cursors.py) — never ``Memory``. When they run is decided by one
place: core/consumers/orchestrator.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel

if TYPE_CHECKING:
    from core.ledger.ledger import Ledger
    from core.memory.stores import Stores


class Consumer(Protocol):
    """What every consumer holds: the ledger it reads, the stores it reads and
    writes, the cursor it keeps. Its run takes what that consumer needs (a
    push retries, a pull pages); the orchestrator is the caller."""

    name: str  # as reports and errors say it
    ledger: "Ledger"
    stores: "Stores"
    cursor: Any  # one of core/ledger/cursors.py: PushCursorFile, PullCursors, VectorCursors


class SyncReport(BaseModel):
    refused: bool = False  # another state directory holds this host id (core/team/claim.py): nothing written
    applied: int = 0
    batches: int = 0
    pending: int = 0
    ok: bool = True
    error: str = ""
    seconds: float = 0.0
    push_seconds: float = 0.0  # of ``seconds``: pushing this host's ledger (with its retries)
    pull_seconds: float = 0.0  # of ``seconds``: pulling the other hosts' episodes
    turns: int = 0  # push-then-pull turns it took (see Orchestrator.run)
    neo4j: str = "synced"  # or why it was not (`ars sync run` without ARS_NEO4J_URI)
    pulled: int = 0  # other hosts' episodes pulled into SQLite (core/consumers/team_pull.py)
    shared: int = 0  # episodes pushed whose id another host wrote first: both kept (core/team/names.py)
    pull_error: str = ""
    pull_refused: list[str] = []  # other hosts' episodes and tombstones not signed by their pinned keys: a line per host
    embeddings: Any = None  # core.consumers.embeddings.EmbedReport of `ars sync run` (None: embedding off)
    resumed: int = 0  # a backfill that went on after the SQLite rowid an interrupted one reached
