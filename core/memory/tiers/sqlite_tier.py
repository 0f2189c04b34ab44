"""SQLite tier: episodes plus an FTS5 index over pre-tokenised columns.

FTS5's ``unicode61`` tokenizer would keep a whole run of Chinese characters as
one token (the article's 0 % on a Chinese benchmark). We index ``index_text``
instead: stemmed English words and CJK bigrams separated by spaces, so every
token FTS5 sees is already a term. Queries are ORs of quoted terms: user text
never reaches MATCH unquoted, so ``"``, ``*``, ``NEAR(``, ``AND`` mean nothing.

Session context: the FTS row has a second column, ``context``, holding the
index terms of the episode's neighbours (``core/memory/context.py``: up to two
episodes either side in the same session, in time order), ranked by
``bm25(1, CONTEXT_WEIGHT)``. A question often names what the turns *around*
an answer talk about; on LoCoMo dev this column took the tier from 68 to 80
R@10. A neighbour that arrives later rewrites the context of the episodes
around it in the same transaction.
"""

from __future__ import annotations

import json
from core.infra.sqlite_lib import BUILD_HINT, FTS_SECURE_DELETE, VERSION, fts_too_old, sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping, Sequence

from core.models import Episode, TierReport
from core.memory.scoring import Candidate, Query, TermString, idf_weight, score_candidates
from core.memory import context as _ctx
from core.memory.context import context_of, order_key
from core.memory.text import index_text
from core.infra.fsutil import create_private, private_dir
from core.infra.sqlite_in import rows_in
from core.team import local as team_local
from core.memory.tiers.base import DeadlineExceeded, Lookup, guarded

SCHEMA = """
PRAGMA journal_mode=WAL;
CREATE TABLE IF NOT EXISTS episodes (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    source TEXT NOT NULL,
    session_id TEXT NOT NULL DEFAULT '',
    agent TEXT NOT NULL DEFAULT '',
    channel TEXT NOT NULL DEFAULT '',
    summary TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL,
    topics TEXT NOT NULL DEFAULT '[]',
    entities TEXT NOT NULL DEFAULT '[]',
    relations TEXT NOT NULL DEFAULT '[]',
    first_ts TEXT,
    last_ts TEXT,
    message_count INTEGER NOT NULL DEFAULT 0,
    meta TEXT NOT NULL DEFAULT '{}',
    event_id TEXT NOT NULL DEFAULT '',  -- the ledger event that wrote this version
    source_key TEXT NOT NULL DEFAULT '',  -- what the parser read (not enrichment): skip re-ingesting it
    seq_ts REAL NOT NULL DEFAULT 0  -- the episode's place in its session (core/memory/context.py order_key)
);
-- How far into ledger.jsonl this database has applied, updated in the same
-- transaction as the episodes: after a crash, recovery replays from here.
CREATE TABLE IF NOT EXISTS applied (
    ledger TEXT PRIMARY KEY,
    offset INTEGER NOT NULL,
    event_id TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS entities (
    episode_rowid INTEGER NOT NULL REFERENCES episodes(rowid) ON DELETE CASCADE,
    name TEXT NOT NULL,
    name_lc TEXT NOT NULL,
    type TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS entities_name ON entities(name_lc);
CREATE INDEX IF NOT EXISTS entities_episode ON entities(episode_rowid);
"""
# The index part, created by ``_create_index`` (and by the migration of a
# version-1 store, which had no ``context`` column).
INDEX_SCHEMA = """
CREATE INDEX IF NOT EXISTS episodes_session ON episodes(session_id, seq_ts, rowid);
CREATE VIRTUAL TABLE IF NOT EXISTS {fts} USING fts5(
    terms, context, tokenize = "unicode61 remove_diacritics 0 tokenchars '_'"
);
"""
VOCAB_SCHEMA = "CREATE VIRTUAL TABLE IF NOT EXISTS episodes_vocab USING fts5vocab(episodes_fts, row);"
# PRAGMA user_version of the layout above. 1 (or 0): before session context.
SCHEMA_VERSION = 2
# bm25 weight of the context column against 1.0 for the episode's own terms.
# LoCoMo dev (bench/recall_quality.py): 0.3-0.7 all within a point; the middle.
CONTEXT_WEIGHT = 0.5

# How many FTS matches the shared scorer re-ranks for a top-k answer.
CANDIDATE_FACTOR = 4
MIN_CANDIDATES = 50
# Documents a candidate MATCH may score, and how many common terms it may AND
# to get there (see ``_plan``). At 100k episodes (bench/recall_latency.py) the
# tier's p95 is ~11 ms at 4,000, ~8 at 2,500 and ~6.5 at 1,500; LoCoMo and
# MADial recall is the same at all three.
MATCH_POSTINGS = 1500
AND_TERMS = 3


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


class SqliteStore:
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

    def _open_schema(self, conn: sqlite3.Connection) -> None:
        """Create the schema, or upgrade a store written by an older ARS in
        place: one transaction, so a crash leaves the old store as it was, and
        the episodes themselves are never rewritten (nothing acknowledged is lost)."""
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == SCHEMA_VERSION:
            return
        if version > SCHEMA_VERSION:
            raise sqlite3.OperationalError(
                f"{self.path} has schema {version}, newer than this ARS ({SCHEMA_VERSION}): upgrade ARS, "
                "or rebuild the store from the ledger with ars rebuild")
        conn.executescript(SCHEMA)
        old = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'episodes_fts'").fetchone() is not None
        conn.execute("BEGIN IMMEDIATE")
        try:
            # another process may have upgraded it while this one waited for the lock
            if conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                n = self._migrate(conn) if old else self._create_index(conn, "episodes_fts")
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                if old:
                    self.notices.append(f"{self.path.name}: upgraded to schema {SCHEMA_VERSION} "
                                        f"(session context column): {n} episodes re-indexed, none lost")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        for line in self.notices:
            print(f"ars: {line}", file=sys.stderr)

    @staticmethod
    def _create_index(conn: sqlite3.Connection, fts: str) -> int:
        for stmt in INDEX_SCHEMA.format(fts=fts).split(";"):
            if stmt.strip():
                conn.execute(stmt)
        # ``rank`` (what ORDER BY rank sorts by) weighs the context column down
        conn.execute(f"INSERT INTO {fts}({fts}, rank) VALUES ('rank', 'bm25(1.0, {CONTEXT_WEIGHT})')")
        if fts == "episodes_fts":
            conn.execute(VOCAB_SCHEMA)
        return 0

    def _migrate(self, conn: sqlite3.Connection) -> int:
        """Version 1 -> 2: the order column and an FTS table with a context
        column, filled from the stored terms (no tokenising, no ledger)."""
        cols = {r[1] for r in conn.execute("PRAGMA table_info(episodes)")}
        if "seq_ts" not in cols:
            conn.execute("ALTER TABLE episodes ADD COLUMN seq_ts REAL NOT NULL DEFAULT 0")
        rows = conn.execute("SELECT e.rowid, e.session_id, e.first_ts, e.last_ts, f.terms FROM episodes e"
                            " JOIN episodes_fts f ON f.rowid = e.rowid").fetchall()
        conn.executemany("UPDATE episodes SET seq_ts = ? WHERE rowid = ?",
                         [(order_key(r[2], r[3]), r[0]) for r in rows])
        conn.execute("DROP TABLE IF EXISTS episodes_fts_v2")
        self._create_index(conn, "episodes_fts_v2")
        terms = {r[0]: r[4] for r in rows}
        sessions: dict[str, list[tuple[float, int]]] = {}
        for r in rows:
            if r[1]:
                sessions.setdefault(r[1], []).append((order_key(r[2], r[3]), r[0]))
        context: dict[int, str] = {}
        for members in sessions.values():
            order = [rowid for _key, rowid in sorted(members)]
            for i, rowid in enumerate(order):
                context[rowid] = context_of([terms[x] for x in order[max(0, i - _ctx.CONTEXT_NEIGHBOURS):i]],
                                            [terms[x] for x in order[i + 1:i + 1 + _ctx.CONTEXT_NEIGHBOURS]])
        conn.executemany("INSERT INTO episodes_fts_v2 (rowid, terms, context) VALUES (?, ?, ?)",
                         [(r[0], r[4], context.get(r[0], "")) for r in rows])
        conn.execute("DROP TABLE IF EXISTS episodes_vocab")
        conn.execute("DROP TABLE episodes_fts")
        conn.execute("ALTER TABLE episodes_fts_v2 RENAME TO episodes_fts")
        conn.execute(VOCAB_SCHEMA)
        return len(rows)

    # -- connections: one per thread (sqlite3 objects are not shared) ---------
    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=10, check_same_thread=False)
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA synchronous=NORMAL")
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

    # -- writes -----------------------------------------------------------------
    def upsert(self, episodes: Iterable[Episode], event_ids: Sequence[str] | None = None,
               ledger_offset: int | None = None, last_event_id: str = "", also=None,
               terms: Mapping[str, str] | None = None) -> int:
        """Insert or replace episodes in one transaction; returns how many.

        With ``ledger_offset`` the ledger cursor moves in the same transaction,
        so the database and its cursor never disagree after a crash; ``also``
        (a function of the connection) runs in it too (the pull cursor).
        ``terms``: episode id -> index terms already computed for that version
        (a pull has the writing host's), so they are not tokenised again.
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

    def applied_offset(self) -> int:
        row = self._conn().execute("SELECT offset FROM applied WHERE ledger = 'main'").fetchone()
        return row[0] if row else 0

    def _rows_for_ids(self, select: str, episode_ids: Sequence[str]) -> Iterator[tuple]:
        """Rows of ``select`` + `` WHERE e.id IN (...)`` (``e``: episodes), in
        chunks of 500 ids (SQLite caps the parameters of one statement)."""
        yield from rows_in(self._conn(), f"{select} WHERE e.id IN ({{in}})", episode_ids)

    def source_keys(self, episode_ids: Sequence[str]) -> dict[str, str]:
        """episode id -> source key of its stored version (to skip unchanged ones)."""
        return dict(self._rows_for_ids("SELECT e.id, e.source_key FROM episodes e", episode_ids))

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

    # -- reads ------------------------------------------------------------------
    def count(self) -> int:
        return self._conn().execute("SELECT count(*) FROM episodes").fetchone()[0]

    def has(self, episode_id: str) -> bool:
        return self._conn().execute("SELECT 1 FROM episodes WHERE id = ?", (episode_id,)).fetchone() is not None

    def get(self, episode_id: str) -> Episode | None:
        row = self._conn().execute(
            "SELECT id, source, session_id, agent, channel, summary, text, topics, entities,"
            " relations, first_ts, last_ts, message_count, meta FROM episodes WHERE id = ?",
            (episode_id,),
        ).fetchone()
        if row is None:
            return None
        keys = ["id", "source", "session_id", "agent", "channel", "summary", "text", "topics",
                "entities", "relations", "first_ts", "last_ts", "message_count", "meta"]
        d = dict(zip(keys, row))
        for key in ("topics", "entities", "relations", "meta"):
            d[key] = json.loads(d[key])
        origin = team_local.origin_of(self._conn(), episode_id)
        if origin is not None:
            d["namespace"], d["host"] = origin
        return Episode.model_validate(d)

    # -- team memory (core/team/local.py) -------------------------------------------
    def origins(self, ids: Sequence[str], me) -> dict[str, dict[str, str]]:
        return team_local.origins(self._conn(), ids, me)

    def team(self):
        """The connection, for core/team/local.py's queries."""
        return self._conn()

    def ids(self) -> list[str]:
        return [r[0] for r in self._conn().execute("SELECT id FROM episodes ORDER BY rowid")]

    # -- the tier protocol --------------------------------------------------------
    def search(self, q: Query, k: int, deadline: float) -> TierReport:
        return guarded(self.name, lambda: _said_why(lambda: self._search(q, k, deadline)),
                       (sqlite3.OperationalError,))

    def health(self) -> TierReport:
        def probe() -> TierReport:
            n = self.count()
            self._conn().execute("SELECT rowid FROM episodes_fts LIMIT 1").fetchall()  # the index opens
            return TierReport(tier=self.name, status="ok" if n else "empty", error=f"{n} episodes")
        return guarded(self.name, lambda: _said_why(probe), (sqlite3.OperationalError,))

    def lookup(self, q: Query, episode_id: str, deadline: float) -> Lookup:
        if not self.has(episode_id):
            return Lookup(stored=False)
        hits, n = self._ranked(q, None, deadline)
        for h in hits:
            if h.episode_id == episode_id:
                return Lookup(True, h.score, h.rank, [t for t in q.terms if t in self._terms_of(episode_id)], n,
                              breakdown=dict(h.breakdown))
        return Lookup(True, None, None, [], n)

    def index_terms_of(self, versions: dict[str, str]) -> dict[str, str]:
        """episode id -> its stored index terms, for the episodes whose stored
        version was written by the given ledger event (the sync worker reuses
        them instead of tokenising the same text again)."""
        out: dict[str, str] = {}
        for eid, event_id, terms in self._rows_for_ids(
                "SELECT e.id, e.event_id, f.terms FROM episodes e JOIN episodes_fts f ON f.rowid = e.rowid", list(versions)):
            if event_id and event_id == versions[eid]:
                out[eid] = terms
        return out

    def cached_count(self) -> int:
        """The episode count the search keeps (dropped on any commit; 1 for
        an empty store): what the dense tier's "not embedded" note uses,
        since count(*) costs ms at 100k episodes."""
        return self._stats(self._conn(), ())[0]

    def summaries_and_texts(self, episode_ids: Sequence[str]) -> Iterator[tuple[str, str, str]]:
        """(id, summary, text) of the given episodes SQLite holds (the dense tier's snippets)."""
        yield from self._rows_for_ids("SELECT e.id, e.summary, e.text FROM episodes e", episode_ids)

    def _terms_of(self, episode_id: str) -> set[str]:
        row = self._conn().execute(
            "SELECT f.terms FROM episodes e JOIN episodes_fts f ON f.rowid = e.rowid WHERE e.id = ?",
            (episode_id,),
        ).fetchone()
        return set(row[0].split()) if row else set()

    def _search(self, q: Query, k: int, deadline: float) -> TierReport:
        hits, n = self._ranked(q, max(k * CANDIDATE_FACTOR, MIN_CANDIDATES), deadline, k)
        return TierReport(tier=self.name, status="ok" if hits else "empty", hits=hits, candidates=n)

    def _ranked(self, q: Query, limit: int | None, deadline: float, k: int | None = None):
        if not q.terms:
            return [], 0
        conn = self._conn()

        def past_deadline() -> int:
            return 1 if time.monotonic() > deadline else 0

        # The progress handler interrupts a long query at the deadline.
        # every 50k VM steps (~ms): finer granularity costs GIL hand-offs
        conn.set_progress_handler(past_deadline, 50_000)
        try:
            n_docs, df = self._stats(conn, q.terms)
            match, min_rowid = self._plan(conn, q.terms, df, limit)
            if not match:
                return [], 0
            # bm25 and the sort over the MATCH alone; the episode columns for the few rows kept
            # ``rank`` is bm25(1, CONTEXT_WEIGHT); the own-terms score alone is
            # computed only for the rows kept, to split out the context component
            inner = ("SELECT rowid, -rank AS s, -bm25(episodes_fts, 1.0, 0.0) AS own FROM episodes_fts"
                     " WHERE episodes_fts MATCH ?")
            params: list = [match]
            if min_rowid is not None:
                inner += " AND rowid >= ?"
                params.append(min_rowid)
            inner += " ORDER BY rank"
            if limit is not None:
                inner += " LIMIT ?"
                params.append(limit)
            sql = (
                "SELECT f.rowid, f.s, t.terms, e.id, e.summary, e.text, e.entities, e.last_ts, e.first_ts, e.source,"
                " f.own"
                f" FROM ({inner}) f JOIN episodes e ON e.rowid = f.rowid JOIN episodes_fts t ON t.rowid = f.rowid"
            )
            rows = conn.execute(sql, params).fetchall()
        except sqlite3.OperationalError as exc:
            if "interrupted" in str(exc):
                raise DeadlineExceeded("sqlite query interrupted at its deadline") from exc
            raise
        finally:
            conn.set_progress_handler(None, 0)
        idf = {t: idf_weight(n_docs, df.get(t, 0)) for t in q.terms}
        cands = [
            Candidate(
                episode_id=r[3],
                text="\n".join(p for p in (r[4], r[5]) if p),
                native=r[1],
                context=max(0.0, r[1] - r[10]),
                terms=TermString(r[2]),
                entities=[(e["name"], e["type"]) for e in json.loads(r[6])],
                ts=_parse_ts(r[7] or r[8]),
                source=r[9],
            )
            for r in rows
        ]
        return score_candidates(q, self.name, "bm25", cands, idf=idf, k=k), len(rows)

    def _stats(self, conn: sqlite3.Connection, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        """Document count and each term's document frequency (fts5vocab lookups
        by equality are index lookups; an IN list or count(*) on the FTS table
        would scan)."""
        # One cache for every connection of this store (recall runs on a pool of
        # threads, each with its own connection; a df lookup reads the term's whole
        # doclist, ms for a common term, so a per-connection cache stayed cold four
        # times as long). It is dropped when this process writes, or when any
        # connection sees PRAGMA data_version move (another process committed;
        # the value only compares within one connection, so each keeps its own).
        version = conn.execute("PRAGMA data_version").fetchone()[0]
        seen = getattr(self._local, "data_version", None)
        self._local.data_version = version
        with self._stats_lock:
            cache = self._stats_cache
            if cache is None or cache[0] != self._writes or (seen is not None and seen != version):
                n = conn.execute("SELECT count(*) FROM episodes").fetchone()[0] or 1
                cache = self._stats_cache = (self._writes, n, {}, {})
        n_docs, known = cache[1], cache[2]
        df: dict[str, int] = {}
        for t in terms:
            if t not in known:
                row = conn.execute("SELECT doc FROM episodes_vocab WHERE term = ?", (t,)).fetchone()
                known[t] = row[0] if row else 0
            df[t] = known[t]
        return n_docs, df

    def _rowid_span(self, conn: sqlite3.Connection) -> tuple[int, int]:
        """The lowest and highest episode rowid (cached with ``_stats``, which runs first)."""
        memo = self._stats_cache[3]
        if "span" not in memo:
            # the episodes table shares the FTS rowids and answers min/max from its b-tree
            lo, hi = conn.execute("SELECT min(rowid), max(rowid) FROM episodes").fetchone()
            memo["span"] = (lo or 0, hi or 0)
        return memo["span"]

    def _plan(self, conn: sqlite3.Connection, terms: Sequence[str], df: dict[str, int],
              limit: int | None) -> tuple[str, int | None]:
        """The MATCH that picks candidates, and the lowest rowid to score (None:
        all). FTS5 computes bm25 for every document a MATCH touches (~2 us each),
        so the work is bounded by ``MATCH_POSTINGS``:

        * the rarest terms, ORed, while their postings fit (common terms still
          count in the re-ranking, as token_match);
        * when even the rarest term is common, the documents that hold the
          rarest terms together (AND, counted first: counting does not score);
        * when those are still too many, the newest of them, in a rowid window
          sized to the budget.

        Unbounded (``limit=None``, explain) matches every term."""
        present = [t for t in terms if df.get(t)]
        if not present:
            return "", None
        if limit is None:
            return " OR ".join(_quote(t) for t in present), None
        rare = sorted(present, key=lambda t: df[t])
        chosen, total = [], 0
        for t in rare:
            if chosen and total + df[t] > MATCH_POSTINGS:
                break
            chosen.append(t)
            total += df[t]
        if total <= MATCH_POSTINGS:
            return " OR ".join(_quote(t) for t in chosen), None
        expr, n = _quote(rare[0]), df[rare[0]]
        for j in range(2, min(len(rare), AND_TERMS) + 1):
            both = " AND ".join(_quote(t) for t in rare[:j])
            m = conn.execute("SELECT count(*) FROM episodes_fts WHERE episodes_fts MATCH ?", (both,)).fetchone()[0]
            if not m:
                break
            expr, n = both, m
            if m <= MATCH_POSTINGS:
                return expr, None
        lo, hi = self._rowid_span(conn)
        return expr, int(hi - (hi - lo + 1) * MATCH_POSTINGS / n)

class _Batch:
    """What one upsert transaction wrote, for ``_index``."""

    def __init__(self) -> None:
        self.terms: dict[int, str] = {}  # rowid -> index terms of the new versions
        self.new: dict[int, tuple[str, float]] = {}  # rowid -> (session, order key)
        self.touched: set[int] = set()  # stored episodes whose neighbours changed
        self.updated: list[int] = []


def _parse_ts(value: str | None):
    from datetime import datetime

    return datetime.fromisoformat(value) if value else None


def _said_why(fn: Callable[[], TierReport]) -> TierReport:
    """``fn()``, with FTS5's "invalid fts5 file format" turned into what happened
    and what to run: an ARS with a newer SQLite forgot with secure-delete."""
    try:
        return fn()
    except sqlite3.OperationalError as exc:
        if fts_too_old(exc):
            raise sqlite3.OperationalError(
                f"the full-text index was written with FTS5 secure-delete, which SQLite {VERSION} cannot read: "
                f"{BUILD_HINT}, or ars rebuild") from exc
        raise
