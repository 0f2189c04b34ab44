"""``SqliteStore``: the local store, always written first, complete and
rebuildable from the ledger; one connection per thread.

The class is put together from its jobs: the schema (schema.py), the writes
(write.py) and the search (search.py); this module holds the connections and
the plain reads.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Iterator, Sequence

from core.infra.fsutil import create_private, private_dir
from core.infra.sqlite_in import rows_in
from core.infra.disk_full import told_as_disk_full
from core.infra.sqlite_lib import sqlite3
from core.memory.tiers.base import guarded
from core.memory.tiers.sqlite.schema import SqliteSchema
from core.memory.tiers.sqlite.search import SqliteSearch, said_why
from core.memory.tiers.sqlite.write import SqliteWrites
from core.models import Episode, TierReport
from core.team import local as team_local


_KEYS = ("id", "source", "session_id", "agent", "channel", "summary", "text", "topics", "entities", "relations",
         "first_ts", "last_ts", "message_count", "meta")
_COLUMNS = ", ".join(_KEYS)


def _episode(row: Sequence, origin: tuple[str, str] | None) -> Episode:
    """An ``episodes`` row (``_COLUMNS``) as the episode it stores."""
    d = dict(zip(_KEYS, row))
    for key in ("topics", "entities", "relations", "meta"):
        d[key] = json.loads(d[key])
    if origin is not None:
        d["namespace"], d["host"] = origin
    return Episode.model_validate(d)


class SqliteStore(SqliteSchema, SqliteWrites, SqliteSearch):
    """The local store: always written first, complete, rebuildable from the ledger."""

    name = "sqlite"

    def __init__(self, path: Path):
        self.path = Path(path)
        if not self.path.parent.is_dir():
            private_dir(self.path.parent)
        if not self.path.exists():
            create_private(self.path)  # sqlite3 would create it with the umask's mode; -wal/-shm copy it
        self._local = threading.local()
        self._write_lock = threading.Lock()
        self._stats_lock = threading.Lock()
        self._stats_cache: tuple[int, int, dict[str, int], dict[str, tuple[int, int]]] | None = None
        self._writes = 0  # bumped by this process's commits (data_version misses its own connection's)
        self.notices: list[str] = []  # one line each, for the person (a schema upgrade)
        with self._write_lock:
            self._open_schema(self._conn())
            team_local.ensure(self._conn())  # its own tables: no schema version of its own needed

    # -- connections: one per thread (sqlite3 objects are not shared) ---------
    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            with told_as_disk_full(self.path.parent, (sqlite3.Error,)):
                conn = sqlite3.connect(self.path, timeout=10, check_same_thread=False)
                conn.execute("PRAGMA foreign_keys=ON")
                conn.execute("PRAGMA synchronous=NORMAL")  # maps the -shm file: the first write of a fresh open
            self._local.conn = conn
        return conn

    def prepare(self) -> None:
        """One-time set-up of the calling thread, before recall starts its clock:
        the connection, the schema read, the document count (see ``_stats``)."""
        self._stats(self._conn(), ())

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    # -- reads ------------------------------------------------------------------
    def applied_offset(self) -> int:
        row = self._conn().execute("SELECT offset FROM applied WHERE ledger = 'main'").fetchone()
        return row[0] if row else 0

    def ledger_lines(self, episode_ids: Sequence[str]) -> tuple[list[int], int, int]:
        """Where the ledger holds these episodes' text: (offsets of the lines this store
        applied, ``lines_from``, ``applied``). Lines before ``lines_from`` (a store
        upgraded from schema 3) and from ``applied`` on are not indexed."""
        at = sorted({r[0] for r in rows_in(self._conn(), "SELECT at FROM ledger_lines WHERE id IN ({in})",
                                           list(episode_ids))})
        cursors = dict(self._conn().execute("SELECT ledger, offset FROM applied WHERE ledger IN ('main', 'lines_from')"))
        return at, cursors.get("lines_from", 0), cursors.get("main", 0)

    def _rows_for_ids(self, select: str, episode_ids: Sequence[str]) -> Iterator[tuple]:
        """Rows of ``select`` + `` WHERE e.id IN (...)`` (``e``: episodes), in
        chunks of 500 ids (SQLite caps the parameters of one statement)."""
        yield from rows_in(self._conn(), f"{select} WHERE e.id IN ({{in}})", episode_ids)

    def source_keys(self, episode_ids: Sequence[str]) -> dict[str, str]:
        """episode id -> source key of its stored version (to skip unchanged ones)."""
        return dict(self._rows_for_ids("SELECT e.id, e.source_key FROM episodes e", episode_ids))

    def times(self, episode_ids: Sequence[str]) -> dict[str, str]:
        """episode id -> when it happened (ISO: its last message, else its first), for hits
        a tier answered without one (the dense tier's)."""
        return {i: t for i, t in self._rows_for_ids("SELECT e.id, coalesce(e.last_ts, e.first_ts) FROM episodes e",
                                                      episode_ids) if t}

    def ids_between(self, start: str, end: str, limit: int) -> list[str]:
        """Ids of the episodes that happened between two ISO times (their last message,
        else their first), newest first: what "yesterday" names when no word matches.
        Times compare as text, so callers widen the range by a zone's width and check
        each episode's own time."""
        rows = self._conn().execute(
            "SELECT id FROM episodes WHERE coalesce(last_ts, first_ts) BETWEEN ? AND ? "
            "ORDER BY coalesce(last_ts, first_ts) DESC LIMIT ?", (start, end, int(limit))).fetchall()
        return [r[0] for r in rows]

    def count(self) -> int:
        return self._conn().execute("SELECT count(*) FROM episodes").fetchone()[0]

    def has(self, episode_id: str) -> bool:
        return self._conn().execute("SELECT 1 FROM episodes WHERE id = ?", (episode_id,)).fetchone() is not None

    def get(self, episode_id: str) -> Episode | None:
        row = self._conn().execute(f"SELECT {_COLUMNS} FROM episodes WHERE id = ?", (episode_id,)).fetchone()
        if row is None:
            return None
        origin = team_local.origin_of(self._conn(), episode_id)
        return _episode(row, origin)

    def episodes_after(self, rowid: int, limit: int) -> list[tuple[int, Episode]]:
        """(rowid, episode) of up to ``limit`` stored episodes after ``rowid``, in rowid order
        (a backfill's pages; each as written here, without its team origin)."""
        rows = self._conn().execute(f"SELECT rowid, {_COLUMNS} FROM episodes WHERE rowid > ? ORDER BY rowid LIMIT ?",
                                    (rowid, int(limit))).fetchall()
        return [(r[0], _episode(r[1:], None)) for r in rows]

    def count_upto(self, rowid: int) -> int:
        return self._conn().execute("SELECT count(*) FROM episodes WHERE rowid <= ?", (rowid,)).fetchone()[0]

    # -- team memory (core/team/local.py) -------------------------------------------
    def origins(self, ids: Sequence[str], me) -> dict[str, dict[str, str]]:
        return team_local.origins(self._conn(), ids, me)

    def team(self):
        """The connection, for core/team/local.py's queries."""
        return self._conn()

    def record_digests(self, host: str, digests, own: bool = False) -> None:
        """What ``host`` signed of these episodes (core/team/local.py), in a transaction of its own."""
        with self._write_lock:
            conn = self._conn()
            with conn:
                team_local.record_digests(conn, host, digests, own)

    def ids(self) -> list[str]:
        return [r[0] for r in self._conn().execute("SELECT id FROM episodes ORDER BY rowid")]

    # -- the tier protocol --------------------------------------------------------
    def health(self) -> TierReport:
        def probe() -> TierReport:
            n = self.count()
            self._conn().execute("SELECT rowid FROM episodes_fts LIMIT 1").fetchall()  # the index opens
            return TierReport(tier=self.name, status="ok" if n else "empty", error=f"{n} episodes")
        return guarded(self.name, lambda: said_why(probe), (sqlite3.OperationalError,))

    def summaries_and_texts(self, episode_ids: Sequence[str]) -> Iterator[tuple[str, str, str]]:
        """(id, summary, text) of the given episodes SQLite holds (the dense tier's snippets)."""
        yield from self._rows_for_ids("SELECT e.id, e.summary, e.text FROM episodes e", episode_ids)
