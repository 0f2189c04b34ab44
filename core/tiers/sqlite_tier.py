"""SQLite tier: episodes plus an FTS5 index over a pre-tokenised column.

FTS5's ``unicode61`` tokenizer would keep a whole run of Chinese characters as
one token (the article's 0 % on a Chinese benchmark). We index ``index_text``
instead: stemmed English words and CJK bigrams separated by spaces, so every
token FTS5 sees is already a term. Queries are ORs of quoted terms: user text
never reaches MATCH unquoted, so ``"``, ``*``, ``NEAR(``, ``AND`` mean nothing.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from ..models import Episode, TierReport
from ..scoring import Candidate, Query, TermString, idf_weight, score_candidates
from ..text import index_text
from ..fsutil import create_private, private_dir
from .base import DeadlineExceeded, Lookup, guarded

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
    source_key TEXT NOT NULL DEFAULT ''  -- what the parser read (not enrichment): skip re-ingesting it
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
CREATE VIRTUAL TABLE IF NOT EXISTS episodes_fts USING fts5(
    terms, tokenize = "unicode61 remove_diacritics 0 tokenchars '_'"
);
CREATE VIRTUAL TABLE IF NOT EXISTS episodes_vocab USING fts5vocab(episodes_fts, row);
"""

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
        with self._write_lock:
            self._conn().executescript(SCHEMA)

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
               ledger_offset: int | None = None, last_event_id: str = "") -> int:
        """Insert or replace episodes in one transaction; returns how many.

        With ``ledger_offset`` the ledger cursor moves in the same transaction,
        so the database and its cursor never disagree after a crash.
        """
        from ..enrich.extract import source_key  # the write path only: recall never loads the extractor

        n = 0
        with self._write_lock:
            conn = self._conn()
            with conn:
                for i, ep in enumerate(episodes):
                    self._upsert_one(conn, ep, event_ids[i] if event_ids else "", source_key)
                    n += 1
                self._writes += 1
                if ledger_offset is not None:
                    conn.execute(
                        "INSERT INTO applied (ledger, offset, event_id) VALUES ('main', ?, ?)"
                        " ON CONFLICT(ledger) DO UPDATE SET offset = excluded.offset, event_id = excluded.event_id",
                        (ledger_offset, last_event_id),
                    )
        return n

    def applied_offset(self) -> int:
        row = self._conn().execute("SELECT offset FROM applied WHERE ledger = 'main'").fetchone()
        return row[0] if row else 0

    def _rows_for_ids(self, select: str, episode_ids: Sequence[str]) -> Iterator[tuple]:
        """Rows of ``select`` + `` WHERE e.id IN (...)`` (``e``: episodes), in
        chunks of 500 ids (SQLite caps the parameters of one statement)."""
        conn = self._conn()
        ids = list(episode_ids)
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            yield from conn.execute(f"{select} WHERE e.id IN ({','.join('?' * len(chunk))})", chunk)

    def source_keys(self, episode_ids: Sequence[str]) -> dict[str, str]:
        """episode id -> source key of its stored version (to skip unchanged ones)."""
        return dict(self._rows_for_ids("SELECT e.id, e.source_key FROM episodes e", episode_ids))

    def _upsert_one(self, conn: sqlite3.Connection, ep: Episode, event_id: str, source_key) -> None:
        row = conn.execute("SELECT rowid FROM episodes WHERE id = ?", (ep.id,)).fetchone()
        if row is not None:
            conn.execute("DELETE FROM episodes_fts WHERE rowid = ?", (row[0],))
            conn.execute("DELETE FROM entities WHERE episode_rowid = ?", (row[0],))
            conn.execute("DELETE FROM episodes WHERE rowid = ?", (row[0],))
        cur = conn.execute(
            "INSERT INTO episodes (id, source, session_id, agent, channel, summary, text, topics,"
            " entities, relations, first_ts, last_ts, message_count, meta, event_id, source_key)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                ep.id, ep.source, ep.session_id, ep.agent, ep.channel, ep.summary, ep.text,
                json.dumps(ep.topics, ensure_ascii=False),
                json.dumps([e.model_dump() for e in ep.entities], ensure_ascii=False),
                json.dumps([r.model_dump() for r in ep.relations], ensure_ascii=False),
                ep.first_ts.isoformat() if ep.first_ts else None,
                ep.last_ts.isoformat() if ep.last_ts else None,
                ep.message_count,
                json.dumps(ep.meta, ensure_ascii=False, default=str),
                event_id,
                source_key(ep),
            ),
        )
        rowid = cur.lastrowid
        conn.execute("INSERT INTO episodes_fts (rowid, terms) VALUES (?, ?)", (rowid, index_text(ep.search_text())))
        if ep.entities:
            conn.executemany(
                "INSERT INTO entities (episode_rowid, name, name_lc, type) VALUES (?,?,?,?)",
                [(rowid, e.name, e.name.lower(), e.type) for e in ep.entities],
            )

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
        return Episode.model_validate(d)

    def ids(self) -> list[str]:
        return [r[0] for r in self._conn().execute("SELECT id FROM episodes ORDER BY rowid")]

    # -- the tier protocol --------------------------------------------------------
    def search(self, q: Query, k: int, deadline: float) -> TierReport:
        return guarded(self.name, lambda: self._search(q, k, deadline), (sqlite3.OperationalError,))

    def health(self) -> TierReport:
        def probe() -> TierReport:
            n = self.count()
            return TierReport(tier=self.name, status="ok" if n else "empty", error=f"{n} episodes")
        return guarded(self.name, probe, (sqlite3.OperationalError,))

    def lookup(self, q: Query, episode_id: str, deadline: float) -> Lookup:
        if not self.has(episode_id):
            return Lookup(stored=False)
        hits, n = self._ranked(q, None, deadline)
        for h in hits:
            if h.episode_id == episode_id:
                return Lookup(True, h.score, h.rank, [t for t in q.terms if t in self._terms_of(episode_id)], n)
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
            inner = "SELECT rowid, -bm25(episodes_fts) AS s FROM episodes_fts WHERE episodes_fts MATCH ?"
            params: list = [match]
            if min_rowid is not None:
                inner += " AND rowid >= ?"
                params.append(min_rowid)
            inner += " ORDER BY rank"
            if limit is not None:
                inner += " LIMIT ?"
                params.append(limit)
            sql = (
                "SELECT f.rowid, f.s, t.terms, e.id, e.summary, e.text, e.entities, e.last_ts, e.first_ts, e.source"
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

def _parse_ts(value: str | None):
    from datetime import datetime

    return datetime.fromisoformat(value) if value else None
