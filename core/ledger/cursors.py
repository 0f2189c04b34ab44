"""Every consumer's cursor, read and written here, in the shapes already on disk.

A deferred consumer (core/consumers) remembers how far it got. The on-disk
shapes predate this module and stay as they are (an existing state directory
keeps working):

* the Neo4j push: ``sync.json``, ``{"neo4j": PushCursor, "failed": n, "pending": n}``
  (a byte offset into the ledger, with its failure count and times);
* the team pull: table ``pull_cursor`` in ``memory.sqlite``, one row per other
  host (``seq``, ``id``), moved in the transaction that stores the page it read;
* the embeddings: table ``cursors`` in ``vectors.sqlite`` (core/memory/embed/store.py),
  committed with the vectors they cover; its rows are named here, and the row
  ``pulled`` holds, per other host, the highest pull ``seq`` embedded (JSON in
  its ``event_id``);
* the SQLite apply: ``memory.sqlite``'s applied offset (core/memory/apply.py).

A pulled episode's event id names the page it came in: ``pull:HOST:SEQ``
(``pulled_event_id``), which the embedding pass of pulled episodes reads back.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from core.infra.fsutil import atomic_write
from core.infra.sqlite_lib import sqlite3

PUSH_FILE = "sync.json"

# the rows of vectors.sqlite's ``cursors`` table
EMBED_CURSOR = "embed"  # the embedding consumer's ledger cursor
CONTEXT_CURSOR = "context"  # the model whose vectors have their session context (a one-time backfill)
VECTORS_NEO4J_CURSOR = "neo4j"  # the copy of vectors to Neo4j's vector index (over the rows' seq)
PULLED_CURSOR = "pulled"  # per other host, the highest pull seq embedded


class PushCursor(BaseModel):
    """The Neo4j push's place in the ledger (``sync.json``, key ``neo4j``)."""

    offset: int = 0  # ledger byte offset applied up to
    last_event_id: str = ""
    applied_total: int = 0
    failed: int = 0  # consecutive failed attempts
    last_error: str = ""
    last_ok: str | None = None
    last_attempt: str | None = None
    # an interrupted ``ars sync backfill``: the SQLite rowid it wrote up to, and where the
    # ledger stood when it started (the cursor it sets when done); 0: none to resume
    backfill_rowid: int = 0
    backfill_offset: int = 0


def load_push(state_dir: Path) -> PushCursor:
    try:
        data = json.loads((Path(state_dir) / PUSH_FILE).read_text())
        return PushCursor.model_validate(data.get("neo4j", {}))
    except (FileNotFoundError, ValueError):
        return PushCursor()


def save_push(state_dir: Path, st: PushCursor, pending: int | None = None) -> None:
    # ``pending`` is counted by the callers that report it (counting reads
    # the rest of the ledger: too slow to do after every batch)
    data = {"neo4j": st.model_dump(), "failed": st.failed}
    if pending is not None:
        data["pending"] = pending
    atomic_write(Path(state_dir) / PUSH_FILE, json.dumps(data, indent=1))


# -- the team pull: one row per other host in memory.sqlite (core/team/local.py makes the table)
def pull_cursor(conn: sqlite3.Connection, host: str) -> tuple[int, str]:
    row = conn.execute("SELECT seq, id FROM pull_cursor WHERE host = ?", (host,)).fetchone()
    return (row[0], row[1]) if row else (-1, "")


def pull_cursors(conn: sqlite3.Connection) -> dict[str, dict]:
    return {h: {"seq": s, "id": i, "pulled": n, "at": at}
            for h, s, i, n, at in conn.execute("SELECT host, seq, id, pulled, at FROM pull_cursor")}


def pulled_hosts(conn: sqlite3.Connection) -> list[str]:
    """The hosts this store ever pulled from, in name order."""
    return [h for (h,) in conn.execute("SELECT host FROM pull_cursor ORDER BY host")]


def move_pull_cursor(conn: sqlite3.Connection, host: str, seq: int, last_id: str, n: int, at: str) -> None:
    conn.execute(
        "INSERT INTO pull_cursor (host, seq, id, pulled, at) VALUES (?, ?, ?, ?, ?)"
        " ON CONFLICT(host) DO UPDATE SET seq = excluded.seq, id = excluded.id,"
        " pulled = pulled + excluded.pulled, at = excluded.at",
        (host, seq, last_id, n, at))


def reset_pull_cursors(conn: sqlite3.Connection) -> None:
    with conn:
        conn.execute("DELETE FROM pull_cursor")


# -- pulled episodes' event ids, and the embedding pass's cursor over them
def pulled_prefix(host: str) -> str:
    return f"pull:{host}:"


def pulled_event_id(host: str, seq: int) -> str:
    """The event id a pulled episode is stored under: the page it came in."""
    return f"{pulled_prefix(host)}{seq}"


def decode_pulled(event_id: str) -> dict[str, int]:
    """The ``pulled`` cursor's per-host seqs; {} when unreadable (embedded again: current vectors are skipped)."""
    if not event_id:
        return {}
    try:
        return {str(k): int(v) for k, v in json.loads(event_id).items()}
    except (ValueError, TypeError, AttributeError):
        return {}


def encode_pulled(done: dict[str, int]) -> str:
    return json.dumps(done, sort_keys=True)


class PushCursorFile:
    """The Neo4j push's cursor file (``sync.json``)."""

    def __init__(self, state_dir: Path):
        self.state_dir = Path(state_dir)
        self.path = self.state_dir / PUSH_FILE

    def load(self) -> PushCursor:
        return load_push(self.state_dir)

    def save(self, st: PushCursor, pending: int | None = None) -> None:
        save_push(self.state_dir, st, pending)


class PullCursors:
    """The team pull's cursors: a row per other host in ``memory.sqlite``."""

    def __init__(self, sqlite):
        self._sqlite = sqlite  # a function giving the SQLite store (opened lazily)

    def of(self, host: str) -> tuple[int, str]:
        return pull_cursor(self._sqlite().team(), host)

    def all(self) -> dict[str, dict]:
        return pull_cursors(self._sqlite().team())

    def hosts(self) -> list[str]:
        return pulled_hosts(self._sqlite().team())

    def reset(self) -> None:
        """Forget them: the next pull reads every other host's episodes again."""
        reset_pull_cursors(self._sqlite().team())


class VectorCursors:
    """The embedding consumer's cursors: rows of ``vectors.sqlite``'s ``cursors``
    table, saved with the vectors they cover (``VectorStore.put(cursor=...)``)."""

    def __init__(self, vectors):
        self._vectors = vectors  # a function giving the vector store (created lazily)

    def of(self, name: str):
        return self._vectors().cursor(name)

    def save(self, cur) -> None:
        self._vectors().save_cursor(cur)
