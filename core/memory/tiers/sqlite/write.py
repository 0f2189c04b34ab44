"""The SQLite tier's writes: upserts in one transaction each (the ledger
cursor with them), forgetting without a trace, and the session context of
the episodes around what changed.

A neighbour that arrives later rewrites the context of the episodes around
it in the same transaction (core/memory/context.py: up to two episodes either
side in the same session, in time order).
"""

from __future__ import annotations

import json
import time
from typing import Iterable, Mapping, Sequence

from core.infra.sqlite_in import rows_in
from core.infra.sqlite_lib import FTS_SECURE_DELETE, sqlite3
from core.memory import context as _ctx
from core.memory.context import context_of, order_key
from core.memory.text import index_text
from core.models import Episode
from core.team import local as team_local


class SqliteWrites:
    """The write half of a ``SqliteStore`` (see store.py)."""

    def upsert(self, episodes: Iterable[Episode], event_ids: Sequence[str] | None = None,
               ledger_offset: int | None = None, last_event_id: str = "", also=None,
               terms: Mapping[str, str] | None = None, lines: Iterable[tuple[str, int]] = ()) -> int:
        """Insert or replace episodes in one transaction; returns how many.

        With ``ledger_offset`` the ledger cursor moves in the same transaction,
        so the database and its cursor never disagree after a crash; ``also``
        (a function of the connection) runs in it too (the pull cursor).
        ``terms``: episode id -> index terms already computed for that version
        (a pull has the writing host's), so they are not tokenised again.
        ``lines``: (episode id, ledger offset) of each ledger line in the batch that
        holds an episode's text (``ledger_lines``, what ``ars forget`` patches).
        """
        from core.enrich.extract import source_key  # the write path only: recall never loads the extractor

        n = 0
        episodes = list(episodes)
        with self._write_lock:
            conn = self._conn()
            with conn:
                team_local.record(conn, episodes)
                if also is not None:
                    also(conn)
                batch = _Batch()
                for i, ep in enumerate(episodes):
                    self._upsert_one(conn, ep, event_ids[i] if event_ids else "", source_key, batch,
                                     (terms or {}).get(ep.id))
                    n += 1
                self._index(conn, batch)
                conn.executemany("INSERT OR IGNORE INTO ledger_lines (id, at) VALUES (?, ?)", lines)
                self._writes += 1
                if ledger_offset is not None:
                    conn.execute(
                        "INSERT INTO applied (ledger, offset, event_id) VALUES ('main', ?, ?)"
                        " ON CONFLICT(ledger) DO UPDATE SET offset = excluded.offset, event_id = excluded.event_id",
                        (ledger_offset, last_event_id),
                    )
        return n

    def forget(self, episode_ids: Sequence[str]) -> tuple[int, list[str]]:
        """Delete episodes so that no file of this store keeps their text:
        rows and FTS entries deleted with ``secure_delete`` (freed pages are
        zeroed), the neighbours' session context recomputed without their
        terms; FTS5's ``secure-delete`` on for that transaction removes the
        old postings at once (core/infra/sqlite_lib.py: only on a SQLite that has it
        safely; otherwise the whole index is merged, ``optimize``, since a
        plain delete leaves them in older segments); the WAL checkpointed and
        truncated. Returns
        (episodes deleted, ids of the neighbours whose context changed: the
        Neo4j sync re-sends theirs)."""
        ids = list(dict.fromkeys(episode_ids))
        if not ids:
            return 0, []
        with self._write_lock:
            conn = self._conn()
            conn.execute("PRAGMA secure_delete=ON")
            fts_secure = FTS_SECURE_DELETE
            with conn:
                if fts_secure:  # off again below: ordinary writes need not pay for it
                    conn.execute("INSERT INTO episodes_fts(episodes_fts, rank) VALUES ('secure-delete', 1)")
                rows = list(rows_in(conn, "SELECT rowid, session_id, seq_ts FROM episodes WHERE id IN ({in})", ids))
                batch = _Batch()
                gone = {r[0] for r in rows}
                for rowid, session, key in rows:
                    if session:
                        before, after = self._window(conn, session, key, rowid)
                        batch.touched.update(before + after)
                for chunk in range(0, len(rows), 500):
                    part = [r[0] for r in rows[chunk:chunk + 500]]
                    marks = ",".join("?" * len(part))
                    conn.execute(f"DELETE FROM episodes_fts WHERE rowid IN ({marks})", part)
                    conn.execute(f"DELETE FROM entities WHERE episode_rowid IN ({marks})", part)
                    conn.execute(f"DELETE FROM episodes WHERE rowid IN ({marks})", part)
                for chunk in range(0, len(ids), 500):
                    part = ids[chunk:chunk + 500]
                    conn.execute(f"DELETE FROM episode_origin WHERE id IN ({','.join('?' * len(part))})", part)
                batch.touched -= gone
                self._index(conn, batch)
                touched = [r[0] for r in rows_in(conn, "SELECT id FROM episodes WHERE rowid IN ({in})",
                                                 sorted(batch.touched))]
                if fts_secure:
                    conn.execute("INSERT INTO episodes_fts(episodes_fts, rank) VALUES ('secure-delete', 0)")
                self._writes += 1
            if gone and not fts_secure:
                t = time.perf_counter()
                with conn:
                    conn.execute("INSERT INTO episodes_fts(episodes_fts) VALUES ('optimize')")
                self.forget_merge_seconds = time.perf_counter() - t  # bench/forget.py reports it
            self.checkpoint(conn)
        return len(gone), touched

    def drop_ledger_lines(self, episode_ids: Sequence[str]) -> None:
        """Forget where these episodes were in the ledger, once ``ars forget`` patched
        those lines (not in ``forget``: replaying a tombstone from the ledger must
        leave them for the forget that is still to patch them)."""
        with self._write_lock:
            conn = self._conn()
            with conn:
                for chunk in range(0, len(episode_ids), 500):
                    part = list(episode_ids[chunk:chunk + 500])
                    conn.execute(f"DELETE FROM ledger_lines WHERE id IN ({','.join('?' * len(part))})", part)

    def checkpoint(self, conn: sqlite3.Connection | None = None, tries: int = 20) -> bool:
        """Copy the WAL into the database and truncate it (old page images in
        the WAL would still hold deleted text). False when a reader kept it
        busy every try (it is truncated at the next checkpoint)."""
        conn = conn or self._conn()
        for _ in range(tries):
            busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
            if not busy:
                return True
            time.sleep(0.05)
        return False

    def _upsert_one(self, conn: sqlite3.Connection, ep: Episode, event_id: str, source_key,
                    batch: "_Batch", terms: str | None = None) -> None:
        row = conn.execute("SELECT rowid, session_id, seq_ts FROM episodes WHERE id = ?", (ep.id,)).fetchone()
        key = order_key(ep.first_ts, ep.last_ts)
        old_rowid = None
        if row is not None:
            old_rowid = row[0]
            if (row[1], row[2]) != (ep.session_id, key) and row[1]:
                # it moves: the episodes around its old place lose it as a neighbour
                before, after = self._window(conn, row[1], row[2], old_rowid)
                batch.touched.update(before + after)
            conn.execute("DELETE FROM episodes_fts WHERE rowid = ?", (old_rowid,))
            conn.execute("DELETE FROM entities WHERE episode_rowid = ?", (old_rowid,))
            conn.execute("DELETE FROM episodes WHERE rowid = ?", (old_rowid,))
        # the same rowid for a new version: it keeps its place among equal timestamps
        cur = conn.execute(
            "INSERT INTO episodes (rowid, id, source, session_id, agent, channel, summary, text, topics,"
            " entities, relations, first_ts, last_ts, message_count, meta, event_id, source_key, seq_ts)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                old_rowid, ep.id, ep.source, ep.session_id, ep.agent, ep.channel, ep.summary, ep.text,
                json.dumps(ep.topics, ensure_ascii=False),
                json.dumps([e.model_dump() for e in ep.entities], ensure_ascii=False),
                json.dumps([r.model_dump() for r in ep.relations], ensure_ascii=False),
                ep.first_ts.isoformat() if ep.first_ts else None,
                ep.last_ts.isoformat() if ep.last_ts else None,
                ep.message_count,
                json.dumps(ep.meta, ensure_ascii=False, default=str),
                event_id,
                source_key(ep),
                key,
            ),
        )
        rowid = cur.lastrowid
        batch.terms[rowid] = index_text(ep.search_text()) if terms is None else terms
        batch.new[rowid] = (ep.session_id, key)
        if ep.entities:
            conn.executemany(
                "INSERT INTO entities (episode_rowid, name, name_lc, type) VALUES (?,?,?,?)",
                [(rowid, e.name, e.name.lower(), e.type) for e in ep.entities],
            )

    @staticmethod
    def _window(conn: sqlite3.Connection, session: str, key: float, rowid: int) -> tuple[list[int], list[int]]:
        """The rowids of up to ``CONTEXT_NEIGHBOURS`` episodes before and after
        a place in a session (nearest last in ``before``, nearest first in ``after``)."""
        before = [r[0] for r in conn.execute(
            "SELECT rowid FROM episodes WHERE session_id = ? AND (seq_ts, rowid) < (?, ?)"
            " ORDER BY seq_ts DESC, rowid DESC LIMIT ?", (session, key, rowid, _ctx.CONTEXT_NEIGHBOURS))]
        after = [r[0] for r in conn.execute(
            "SELECT rowid FROM episodes WHERE session_id = ? AND (seq_ts, rowid) > (?, ?)"
            " ORDER BY seq_ts, rowid LIMIT ?", (session, key, rowid, _ctx.CONTEXT_NEIGHBOURS))]
        return before[::-1], after

    def _index(self, conn: sqlite3.Connection, batch: "_Batch") -> None:
        """The FTS rows of a batch's episodes, and new contexts for the stored
        episodes next to them (a neighbour that arrived later). Done once per
        batch, after every episode of it is in place: a session ingested in
        order rewrites only the two episodes before the batch."""
        windows: dict[int, tuple[list[int], list[int]]] = {}
        todo = dict.fromkeys(batch.touched)
        for rowid, (session, key) in batch.new.items():
            todo[rowid] = None
            if session:
                windows[rowid] = self._window(conn, session, key, rowid)
                todo.update(dict.fromkeys(windows[rowid][0] + windows[rowid][1]))
        stored: dict[int, tuple[str, str]] = {}  # rowid -> (terms, context) of stored episodes

        def terms_of(rowid: int) -> str:
            if rowid in batch.terms:
                return batch.terms[rowid]
            if rowid not in stored:
                row = conn.execute("SELECT terms, context FROM episodes_fts WHERE rowid = ?", (rowid,)).fetchone()
                stored[rowid] = (row[0], row[1]) if row else ("", "")
            return stored[rowid][0]

        for rowid in todo:
            if rowid not in windows:
                row = conn.execute("SELECT session_id, seq_ts FROM episodes WHERE rowid = ?", (rowid,)).fetchone()
                if row is None:
                    continue  # deleted in this batch (an id upserted twice keeps one rowid)
                windows[rowid] = self._window(conn, row[0], row[1], rowid) if row[0] else ([], [])
            before, after = windows.get(rowid, ([], []))
            context = context_of([terms_of(x) for x in before], [terms_of(x) for x in after])
            if rowid in batch.new:
                conn.execute("INSERT INTO episodes_fts (rowid, terms, context) VALUES (?, ?, ?)",
                             (rowid, batch.terms[rowid], context))
            else:
                terms_of(rowid)
                if stored[rowid][1] != context:
                    conn.execute("UPDATE episodes_fts SET context = ? WHERE rowid = ?", (context, rowid))
                    # the sync worker re-sends this context to Neo4j (see contexts_around)
                    batch.updated.append(rowid)

    def session_neighbours(self, episode_ids: Sequence[str]) -> dict[str, list[str]]:
        """episode id -> the ids of its neighbours (the same window as the
        context field: up to ``CONTEXT_NEIGHBOURS`` either side in its session),
        for the given episodes SQLite holds; the dense tier's context vectors."""
        conn = self._conn()
        windows: dict[str, list[int]] = {}
        for eid, rowid, session, key in self._rows_for_ids(
                "SELECT e.id, e.rowid, e.session_id, e.seq_ts FROM episodes e", episode_ids):
            if session:
                before, after = self._window(conn, session, key, rowid)
                windows[eid] = before + after
            else:
                windows[eid] = []
        rowids = sorted({r for rows in windows.values() for r in rows})
        id_of: dict[int, str] = dict(rows_in(conn, "SELECT rowid, id FROM episodes WHERE rowid IN ({in})", rowids))
        return {eid: [id_of[r] for r in rows if r in id_of] for eid, rows in windows.items()}

    def contexts_around(self, episode_ids: Sequence[str]) -> dict[str, str]:
        """episode id -> stored context, for the given episodes and their
        neighbours (what the Neo4j sync writes with a batch: a neighbour that
        arrived later changed the context of the episodes before it)."""
        conn = self._conn()
        rows = list(self._rows_for_ids("SELECT e.rowid, e.session_id, e.seq_ts FROM episodes e", episode_ids))
        wanted = set()
        for rowid, session, key in rows:
            wanted.add(rowid)
            if session:
                before, after = self._window(conn, session, key, rowid)
                wanted.update(before + after)
        return dict(rows_in(conn, "SELECT e.id, f.context FROM episodes e JOIN episodes_fts f ON f.rowid = e.rowid"
                                  " WHERE e.rowid IN ({in})", sorted(wanted)))


class _Batch:
    """What one upsert transaction wrote, for ``_index``."""

    def __init__(self) -> None:
        self.terms: dict[int, str] = {}  # rowid -> index terms of the new versions
        self.new: dict[int, tuple[str, float]] = {}  # rowid -> (session, order key)
        self.touched: set[int] = set()  # stored episodes whose neighbours changed
        self.updated: list[int] = []
