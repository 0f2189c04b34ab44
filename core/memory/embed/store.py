"""``state/vectors.sqlite``: episode vectors, and the cursors of their consumers.

Its own file, not a table of ``memory.sqlite``: ``ars rebuild`` recreates
memory.sqlite from the ledger in seconds, but vectors cost a model's time
(minutes per 100k episodes), so a rebuild must not throw them away; and the
dense tier keeps answering when memory.sqlite cannot be opened.

One row per episode: the vector the dense tier searches (float32 BLOB), the
episode's own vector when that differs (``own``: the searched one leans
toward its session neighbours, see context_vectors.py), the model that made
it and a hash of the text it was made from (an enrichment that changes only
the summary does not re-embed). ``seq`` grows with every write, so a reader
loads only what is new, and the Neo4j copy has a cursor of its own.
Every row deleted (a newer vector of the episode, ``ars forget``) leaves
its ``seq`` in ``gone`` (a trigger, so no writer can forget to): the
approximate index (ann.py) takes those out of its segment files.
The ``cursors`` row ``embed`` is the embedding consumer's ledger cursor,
written in the same transaction as the vectors it covers: after a crash
the consumer resumes there and never embeds a committed batch twice.
"""

from __future__ import annotations

import hashlib
from core.infra.sqlite_lib import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from core.infra.fsutil import create_private, private_dir
from core.infra.sqlite_in import rows_in

from core.memory.embed import VECTORS_FILE
# 32 KB pages: a 512-dim vector is a 2 KB row, and SQLite's default 4 KB page
# holds one such row (half the page empty: 4 KB per vector); 32 KB pages hold 15.
SCHEMA = """
PRAGMA page_size=32768;
PRAGMA journal_mode=WAL;
CREATE TABLE IF NOT EXISTS vectors (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    episode_id TEXT NOT NULL UNIQUE,
    model TEXT NOT NULL,
    text_key TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vec BLOB NOT NULL,
    own BLOB
);
CREATE INDEX IF NOT EXISTS vectors_model ON vectors(model);
CREATE TABLE IF NOT EXISTS gone (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    seq INTEGER NOT NULL,
    model TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS vectors_gone AFTER DELETE ON vectors
BEGIN INSERT INTO gone (seq, model) VALUES (old.seq, old.model); END;
CREATE TABLE IF NOT EXISTS cursors (
    name TEXT PRIMARY KEY,
    offset INTEGER NOT NULL DEFAULT 0,
    event_id TEXT NOT NULL DEFAULT '',
    model TEXT NOT NULL DEFAULT '',
    failed INTEGER NOT NULL DEFAULT 0,
    last_error TEXT NOT NULL DEFAULT '',
    last_ok TEXT
);
"""


def text_key(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=10).hexdigest()


@dataclass
class Cursor:
    name: str
    offset: int = 0  # ledger byte offset (embed) or vectors.seq (neo4j)
    event_id: str = ""
    model: str = ""
    failed: int = 0
    last_error: str = ""
    last_ok: str | None = None


@dataclass
class VectorRow:
    episode_id: str
    model: str
    text_key: str
    vec: bytes  # float32, little-endian: what the dense tier searches
    own: bytes | None = None  # the episode's own vector, when ``vec`` leans toward its neighbours


class VectorStore:
    def __init__(self, state_dir: Path, create: bool = True):
        self.path = Path(state_dir) / VECTORS_FILE
        if create:
            if not self.path.parent.is_dir():
                private_dir(self.path.parent)
            if not self.path.exists():
                create_private(self.path)
        elif not self.path.exists():
            raise FileNotFoundError(f"no {VECTORS_FILE} in {state_dir}")
        self._local = threading.local()
        self._write_lock = threading.RLock()  # re-entrant: a first put opens the connection, which writes the schema under it
        self._ready = False

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=10, check_same_thread=False)
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
            if not self._ready:
                with self._write_lock:
                    conn.executescript(SCHEMA)
                    columns = {r[1] for r in conn.execute("PRAGMA table_info(vectors)")}
                    if "own" not in columns:  # a store from before context vectors: vec is the own vector
                        conn.execute("ALTER TABLE vectors ADD COLUMN own BLOB")
                    self._ready = True
        return conn

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    # -- cursors --------------------------------------------------------------
    def cursor(self, name: str) -> Cursor:
        row = self._conn().execute(
            "SELECT offset, event_id, model, failed, last_error, last_ok FROM cursors WHERE name = ?", (name,)
        ).fetchone()
        return Cursor(name, *row) if row else Cursor(name)

    def _save_cursor(self, conn: sqlite3.Connection, c: Cursor) -> None:
        conn.execute(
            "INSERT INTO cursors (name, offset, event_id, model, failed, last_error, last_ok) VALUES (?,?,?,?,?,?,?)"
            " ON CONFLICT(name) DO UPDATE SET offset = excluded.offset, event_id = excluded.event_id,"
            " model = excluded.model, failed = excluded.failed, last_error = excluded.last_error,"
            " last_ok = excluded.last_ok",
            (c.name, c.offset, c.event_id, c.model, c.failed, c.last_error, c.last_ok),
        )

    def save_cursor(self, c: Cursor) -> None:
        with self._write_lock:
            conn = self._conn()
            with conn:
                self._save_cursor(conn, c)

    # -- vectors --------------------------------------------------------------
    def put(self, rows: Sequence[VectorRow], dim: int, cursor: Cursor | None = None) -> None:
        """Write vectors (replacing an episode's older one: it gets a new
        ``seq``) and, in the same transaction, the cursor that covers them."""
        with self._write_lock:
            conn = self._conn()
            with conn:
                for r in rows:
                    conn.execute("DELETE FROM vectors WHERE episode_id = ?", (r.episode_id,))
                conn.executemany(
                    "INSERT INTO vectors (episode_id, model, text_key, dim, vec, own) VALUES (?,?,?,?,?,?)",
                    [(r.episode_id, r.model, r.text_key, dim, r.vec, r.own) for r in rows],
                )
                if cursor is not None:
                    self._save_cursor(conn, cursor)

    def checkpoint(self) -> None:
        """Fold the WAL back into the file (after a large run: the WAL would double the disk)."""
        with self._write_lock:
            self._conn().execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def keys_of(self, episode_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        """episode id -> (model, text key) of its stored vector."""
        rows = rows_in(self._conn(), "SELECT episode_id, model, text_key FROM vectors WHERE episode_id IN ({in})",
                       episode_ids)
        return {eid: (model, key) for eid, model, key in rows}

    def stored_rows(self, episode_ids: Sequence[str], model: str) -> dict[str, VectorRow]:
        """episode id -> its stored row, for those with a vector of ``model``
        (``own`` filled in: the searched vector when the two are the same)."""
        rows = rows_in(self._conn(), "SELECT episode_id, text_key, vec, own FROM vectors"
                                     " WHERE model = ? AND episode_id IN ({in})", dict.fromkeys(episode_ids),
                       before=[model])
        return {eid: VectorRow(eid, model, key, vec, own if own is not None else vec) for eid, key, vec, own in rows}

    def own_of(self, episode_ids: Sequence[str]) -> dict[str, bytes | None]:
        """episode id -> its own vector where it differs from the searched one, else None."""
        return dict(rows_in(self._conn(), "SELECT episode_id, own FROM vectors WHERE episode_id IN ({in})",
                            episode_ids))

    def max_seq(self) -> int:
        return self._conn().execute("SELECT coalesce(max(seq), 0) FROM vectors").fetchone()[0]

    def count(self, model: str | None = None) -> int:
        if model is None:
            return self._conn().execute("SELECT count(*) FROM vectors").fetchone()[0]
        return self._conn().execute("SELECT count(*) FROM vectors WHERE model = ?", (model,)).fetchone()[0]

    def rows_after(self, seq: int, model: str | None = None, limit: int | None = None
                   ) -> Iterator[tuple[int, str, str, int, bytes]]:
        """(seq, episode id, model, dim, vector bytes) written after ``seq``, in order."""
        sql = "SELECT seq, episode_id, model, dim, vec FROM vectors WHERE seq > ?"
        params: list = [seq]
        if model is not None:
            sql += " AND model = ?"
            params.append(model)
        sql += " ORDER BY seq"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        yield from self._conn().execute(sql, params)

    def count_after(self, seq: int, model: str) -> int:
        """Vectors of ``model`` written after ``seq`` (a range of the primary key: cheap for a small tail)."""
        return self._conn().execute("SELECT count(*) FROM vectors WHERE seq > ? AND model = ?",
                                    (seq, model)).fetchone()[0]

    def alive(self, seqs: Sequence[int]) -> dict[int, tuple[str, bytes]]:
        """seq -> (episode id, vector) of those of ``seqs`` still stored (a deleted one is absent)."""
        rows = rows_in(self._conn(), "SELECT seq, episode_id, vec FROM vectors WHERE seq IN ({in})",
                       [int(s) for s in seqs])
        return {seq: (eid, vec) for seq, eid, vec in rows}

    def gone_after(self, gid: int, model: str) -> tuple[int, list[int]]:
        """(last gone id, seqs of ``model``'s rows deleted after gone id ``gid``)."""
        rows = self._conn().execute("SELECT id, seq FROM gone WHERE id > ? AND model = ? ORDER BY id",
                                    (gid, model)).fetchall()
        return (rows[-1][0] if rows else gid), [seq for _id, seq in rows]

    def prune_gone(self, upto: int, model: str) -> None:
        """Forget the deletions of ``model`` up to gone id ``upto`` (its index has taken them out)."""
        with self._write_lock:
            conn = self._conn()
            with conn:
                conn.execute("DELETE FROM gone WHERE id <= ? AND model = ?", (upto, model))

    def vector_of(self, episode_id: str) -> tuple[str, int, bytes] | None:
        return self._conn().execute("SELECT model, dim, vec FROM vectors WHERE episode_id = ?",
                                    (episode_id,)).fetchone()

    def ids(self, model: str) -> Iterable[str]:
        return [r[0] for r in self._conn().execute("SELECT episode_id FROM vectors WHERE model = ?", (model,))]

