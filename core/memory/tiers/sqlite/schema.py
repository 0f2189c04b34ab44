"""The SQLite tier's tables, and the upgrade of a store an older ARS wrote.

``episodes`` holds what was written; ``episodes_fts`` indexes ``index_text``
(stemmed English words and CJK bigrams, space-separated: every token FTS5
sees is already a term) in two columns, the episode's own terms and
``context``, its session neighbours' terms (core/memory/context.py), ranked
by ``bm25(1, CONTEXT_WEIGHT)``.
"""

from __future__ import annotations

import json
import sys

from core.infra.sqlite_lib import sqlite3
from core.memory import context as _ctx
from core.memory.context import context_of, order_key
from core.memory.text import index_text

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
-- Where each episode's text is in ledger.jsonl: the lines of its versions and of the
-- events quoting it (loop transitions' recall results), so ``ars forget`` patches those
-- lines without reading the whole ledger (1.7 GB at a million episodes). Lines before
-- applied['lines_from'] (a store upgraded from schema 3) and after applied['main'] are
-- not here: forget scans those ranges.
CREATE TABLE IF NOT EXISTS ledger_lines (
    id TEXT NOT NULL,
    at INTEGER NOT NULL,
    PRIMARY KEY (id, at)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS entities (
    episode_rowid INTEGER NOT NULL REFERENCES episodes(rowid) ON DELETE CASCADE,
    name TEXT NOT NULL,
    name_lc TEXT NOT NULL,
    type TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS episodes_when ON episodes(coalesce(last_ts, first_ts));
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
# PRAGMA user_version of the layout above. 1 (or 0): before session context; 2: transcripts' role
# labels and tool-argument names were index terms (core/memory/text.py strip_scaffolding); 3: no
# ledger_lines; 4: the context field weighed every neighbour alike (core/memory/context.py
# REPLIED_TO_WEIGHT). A store of schema 4 is not re-indexed on open (at a million episodes that
# would hold up whichever hook opened it first for minutes): its contexts take the new weight as
# their sessions grow, and all of them with `ars rebuild`.
SCHEMA_VERSION = 5
WHAT_CHANGED = {1: "session context column", 2: "role labels and tool boilerplate no longer indexed",
                3: "where each episode is in the ledger, for ars forget",
                4: "the episode each one answers counts twice in its session context"}
# versions before this one indexed other terms: the FTS table is built again
TERMS_VERSION = 3
# bm25 weight of the context column against 1.0 for the episode's own terms.
# LoCoMo dev (bench/recall_quality.py): 0.3-0.7 all within a point; the middle.
CONTEXT_WEIGHT = 0.5


def _search_text(summary: str, topics: str, entities: str, text: str) -> str:
    """``Episode.search_text`` of a stored row (its JSON columns as written by write.py)."""
    try:
        names = " ".join(str(e.get("name", "")) for e in json.loads(entities or "[]") if isinstance(e, dict))
        words = " ".join(str(t) for t in json.loads(topics or "[]"))
    except ValueError:
        names = words = ""
    return "\n".join(p for p in (summary, words, names, text) if p)


class SqliteSchema:
    """Creates or upgrades the schema of a ``SqliteStore`` (part of it: see store.py)."""

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
                n = 0
                if not old:
                    self._create_index(conn, "episodes_fts")
                elif version < TERMS_VERSION:
                    n = self._migrate(conn)
                if old:
                    # what the ledger held before the upgrade is not in ledger_lines: forget scans it
                    conn.execute("INSERT OR IGNORE INTO applied (ledger, offset) SELECT 'lines_from', "
                                 "coalesce((SELECT offset FROM applied WHERE ledger = 'main'), 0)")
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                if old:
                    what = "; ".join(WHAT_CHANGED[v] for v in sorted(WHAT_CHANGED) if v >= max(version, 1))
                    done = (f"{n} episodes re-indexed, none lost (a Neo4j store takes the new terms with "
                            "`ars sync backfill`)") if version < TERMS_VERSION else (
                        "nothing re-indexed: the episodes written from now on and their neighbours take the "
                        "new context, `ars rebuild` gives it to every episode")
                    self.notices.append(f"{self.path.name}: upgraded to schema {SCHEMA_VERSION} ({what}): {done}")
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
        """An older store -> this one: the order column (version 1 had none) and the FTS table
        built again from the episodes' own text, tokenised as now (version 2 indexed the
        transcripts' role labels), with its context column. No ledger read, nothing rewritten
        in ``episodes``."""
        cols = {r[1] for r in conn.execute("PRAGMA table_info(episodes)")}
        if "seq_ts" not in cols:
            conn.execute("ALTER TABLE episodes ADD COLUMN seq_ts REAL NOT NULL DEFAULT 0")
        rows = [(r[0], r[1], r[2], r[3], index_text(_search_text(*r[4:])))
                for r in conn.execute("SELECT rowid, session_id, first_ts, last_ts, summary, topics, entities, "
                                      "text FROM episodes").fetchall()]
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
