"""The SQLite tier's search: an FTS5 MATCH picks candidates, the shared
scorer (core/memory/scoring.py) ranks them.

Queries are ORs (or, for common terms, ANDs) of quoted terms: user text never
reaches MATCH unquoted, so ``"``, ``*``, ``NEAR(``, ``AND`` mean nothing. The
work a query may cost is bounded (``_plan``); a query past its deadline is
interrupted by SQLite's progress handler.
"""

from __future__ import annotations

import json
import time
from datetime import timedelta
from typing import Callable, Sequence

from core.infra.sqlite_lib import BUILD_HINT, VERSION, fts_too_old, sqlite3
from core.memory.scoring import Candidate, Query, TermString, idf_weight, score_candidates
from core.memory.tiers.base import DeadlineExceeded, Lookup, guarded
from core.models import TierReport

# How many FTS matches the shared scorer re-ranks for a top-k answer.
CANDIDATE_FACTOR = 4
MIN_CANDIDATES = 50
# Documents a candidate MATCH may score, and how many common terms it may AND
# to get there (see ``_plan``). At 100k episodes (bench/recall_latency.py) the
# tier's p95 is ~11 ms at 4,000, ~8 at 2,500 and ~6.5 at 1,500; LoCoMo and
# MADial recall is the same at all three.
MATCH_POSTINGS = 1500
AND_TERMS = 3
WINDOW_CANDIDATES = 50  # episodes of a time the query names, scored beside the MATCH's (``_in_windows``)


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


class SqliteSearch:
    """The search half of a ``SqliteStore`` (see store.py): the tier protocol's
    ``search`` and ``lookup``, and the document statistics they use."""

    def search(self, q: Query, k: int, deadline: float) -> TierReport:
        return guarded(self.name, lambda: said_why(lambda: self._search(q, k, deadline)),
                       (sqlite3.OperationalError,))

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

    def doc_freqs(self, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        """Document count and each term's document frequency, from the cache the
        search just filled for the same query (core/context/floor.py weighs terms by them)."""
        return self._stats(self._conn(), terms)

    def terms_of(self, episode_ids: Sequence[str]) -> dict[str, str]:
        """episode id -> its stored index terms (space-separated), for the episodes held."""
        return dict(self._rows_for_ids(
            "SELECT e.id, f.terms FROM episodes e JOIN episodes_fts f ON f.rowid = e.rowid", list(episode_ids)))

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
        if not q.terms and not q.windows:
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
            rows = []
            if not match and not (q.windows and limit is not None):
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
            if match:  # none for a question that is only a time ("前天呢？"): that time's episodes alone
                rows = conn.execute(sql, params).fetchall()
            if q.windows and limit is not None:
                rows += self._in_windows(q.windows, {r[3] for r in rows})
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

    def _in_windows(self, windows: Sequence, have: set[str]) -> list[tuple]:
        """Episodes that happened in the times the query names ("前天", "last week"), newest
        first, as candidates beside the MATCH's (a memory of that day may share no word with
        the question): at most ``WINDOW_CANDIDATES`` a window, found as the per-turn block
        finds a named day's (``ids_between``: the text range a day wider each side, since
        times keep their own zones; ``Window.holds`` decides)."""
        out: list[tuple] = []
        for w in windows:
            ids = [i for i in self.ids_between((w.start - timedelta(days=1)).isoformat(),
                                               (w.end + timedelta(days=1)).isoformat(), 4 * WINDOW_CANDIDATES)
                   if i not in have]
            rows = {r[3]: r for r in self._rows_for_ids(
                "SELECT e.rowid, 0.0, t.terms, e.id, e.summary, e.text, e.entities, e.last_ts, e.first_ts, e.source,"
                " 0.0 FROM episodes e JOIN episodes_fts t ON t.rowid = e.rowid", ids)}
            for i in ids:  # newest first, as ids_between gives them
                r = rows.get(i)
                if r is not None and w.holds(_parse_ts(r[7] or r[8])):
                    have.add(i)
                    out.append(r)
                    if len(out) >= WINDOW_CANDIDATES * len(windows):
                        return out
        return out

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


def said_why(fn: Callable[[], TierReport]) -> TierReport:
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
