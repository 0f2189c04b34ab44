"""Unified recall over the three tiers, and ``explain`` for a missed memory.

Fan-out: the index tiers (Neo4j, SQLite) run in parallel, each with its own
deadline; recall never waits longer than a tier's deadline for it. The raw
file scan is the fallback: it runs when no index tier answered (or when asked
for by name), because it is the slowest and always there. Answers are fused
by score (``scoring.fuse``: each tier's scores normalised, weighted, summed),
duplicates collapsed; ``degraded`` says a tier that should have answered did not.
"""

from __future__ import annotations

import shutil
import time
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Iterable, Sequence

from pydantic import ValidationError

from core.config import Settings
from core.errors import BadQuery, first_error
from core.infra.fsutil import fsync_dir
from core.ledger.ledger import EPISODE_EVENT, BadEvent, Event, Ledger, content_id
from core.govern.tombstone import FORGET_EVENT, Forgotten, load as forgotten_set, merge as merge_forgotten
from core.models import TIER_NAMES, Episode, Explanation, RecallResult, TierExplanation, TierReport
from core.memory import scoring
from core.memory.scoring import Query, fuse
from core.memory.text import index_terms, query_terms, term_of, tokenize
from core.memory.tiers.base import Lookup, Tier, one_line
from core.memory.tiers.files import FilesTier
from core.infra.pools import DaemonPool
from core.infra.shared_breaker import SharedBreaker
from core.memory.tiers.sqlite import SqliteStore
from core.infra.writer_lock import WriterBusy, writer_lock
from core.team.identity import TEAM_FILE, bind as bind_identity, resolve as resolve_identity
from core.team.scope import OVERFETCH, Scope, keep_in_scope, parse_scope

ANSWERED = ("ok", "empty")
FAILED = ("down", "timeout", "error")
EXPLAIN_DEADLINE = 10.0
# A tier's one-time set-up (it opens files, loads a model, creates a driver: no network), at
# least this long, and PREPARE_PER_DEADLINE times the tier's own deadline: who gives a tier
# 10 s to answer gives its set-up longer too (a model load on a machine four times
# oversubscribed took over 10 s, and the tier then sat out the whole query)
PREPARE_TIMEOUT = 10.0
PREPARE_PER_DEADLINE = 4.0
MAX_QUERY_CHARS = 4000
MAX_QUERY_TOKENS = 200


def _sqlite_files(path: Path) -> list[Path]:
    """A database file and its WAL and shared-memory side files."""
    return [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]


def _not_configured(tier: str) -> str:
    return "off (ARS_EMBEDDER=off)" if tier == "dense" else "not configured (set ARS_NEO4J_URI)"


def parse_tiers(tiers: str | Sequence[str] | None) -> list[str] | None:
    if tiers is None:
        return None
    names = [t.strip().lower() for t in (tiers.split(",") if isinstance(tiers, str) else tiers) if t.strip()]
    unknown = [t for t in names if t not in TIER_NAMES]
    if unknown or not names:
        raise BadQuery(
            f"unknown tier {', '.join(repr(t) for t in unknown) or '(none given)'}: "
            f"choose from {', '.join(TIER_NAMES)}, comma-separated"
        )
    return list(dict.fromkeys(names))


def prepare_query(text: str) -> Query:
    """The query every tier shares. What a query can cost is capped: its
    first ``MAX_QUERY_CHARS`` characters and first ``MAX_QUERY_TOKENS``
    distinct tokens are searched (an agent may pass a whole prompt; a 1 MB
    query took 24 s and ignored every deadline)."""
    if not isinstance(text, str) or not text.strip():
        raise BadQuery("empty query: give some words to search for, e.g. ars recall \"neo4j outage\"")
    text = text[:MAX_QUERY_CHARS]
    tokens = tokenize(text, query=True)[:MAX_QUERY_TOKENS]
    if not tokens:
        raise BadQuery(f"query {text.strip()[:40]!r} has no searchable words: use letters, digits or CJK characters")
    return Query.prepare(text, tokens, query_terms(tokens))


class Memory:
    """The three tiers of one state directory."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.state_dir = Path(settings.state_dir)
        self._sqlite: SqliteStore | None = None
        self._neo4j = None
        self._warming: list[Future] = []
        self._sync = None
        self._dense = None  # the dense tier (core/memory/tiers/dense/), built on first use
        self._vectors = None  # state/vectors.sqlite (core/memory/embed/store.py)
        self._embed_sync = None
        # the namespace and host this state directory writes as (state/team.json)
        self.identity = resolve_identity(self.state_dir, settings.namespace, settings.host_id, settings.agent,
                                         record=self.state_dir.is_dir())
        self.ledger = Ledger(self.state_dir, self.identity.namespace)
        self._bound = False  # team.json written (checked once per process, at the first store)
        self.ledger_problems: list[BadEvent] = []  # lines the last apply skipped
        self._tombstones = Forgotten()  # the forget events the last apply met (core/govern/tombstone.py)
        self.files = FilesTier(self.state_dir)
        # One small pool per tier: a hung backend can only tie up its own threads.
        # Neo4j's are daemon threads: a process that has its answer exits at
        # once, not after a black-holed server's connect timeout.
        self._pools = {t: ThreadPoolExecutor(max_workers=4, thread_name_prefix=f"ars-{t}")
                       for t in TIER_NAMES if t != "neo4j"}
        self._pools["neo4j"] = DaemonPool(4, "ars-neo4j")
        self.shared_breaker = SharedBreaker(self.state_dir, settings.neo4j_breaker_cooldown)
        self._prepared: dict[str, TierReport | None] = {}  # tier -> its set-up failure, if any
        self.deadlines = {
            "neo4j": settings.neo4j_deadline,
            "sqlite": settings.sqlite_deadline,
            "files": settings.files_deadline,
            "dense": settings.dense_deadline,
        }

    # -- tiers, opened lazily so one broken store never stops the others ------
    @property
    def sqlite(self) -> SqliteStore:
        if self._sqlite is None:
            self._sqlite = SqliteStore(self.state_dir / "memory.sqlite")
        return self._sqlite

    @property
    def neo4j(self):
        """The Neo4j store, or None when no URI is configured."""
        if self._neo4j is None and self.settings.neo4j_uri:
            from core.memory.tiers.neo4j import Neo4jStore

            pw = self.settings.neo4j_password
            self._neo4j = Neo4jStore(
                self.settings.neo4j_uri, self.settings.neo4j_user,
                pw.get_secret_value() if pw else None, self.settings.neo4j_database,
                connect_timeout=self.settings.neo4j_connect_timeout,
                breaker_cooldown=self.settings.neo4j_breaker_cooldown,
                namespace=self.identity.namespace, host=self.identity.host, agent=self.identity.agent,
                bookmarks_path=str(self.state_dir / "neo4j-bookmarks.json"),
            )
        return self._neo4j

    # -- the dense tier: vectors in state/vectors.sqlite (and Neo4j), embedded by `ars sync run`
    @property
    def vectors(self):
        """The vector store, created if missing (the embedding consumer writes it)."""
        if self._vectors is None:
            from core.memory.embed.store import VectorStore

            self._vectors = VectorStore(self.state_dir)
        return self._vectors

    def vectors_readonly(self):
        """The vector store; FileNotFoundError when nothing was embedded yet (a reader creates no file)."""
        if self._vectors is None:
            from core.memory.embed.store import VectorStore

            self._vectors = VectorStore(self.state_dir, create=False)
        return self._vectors

    @property
    def dense(self):
        """The dense tier, or None when ARS_EMBEDDER=off."""
        if self._dense is None and self.settings.embedder != "off":
            from core.memory.embed.choice import embedder_for
            from core.memory.tiers.dense import DenseTier

            self._dense = DenseTier(embedder_for(self.settings), lambda: self.sqlite, lambda: self.neo4j,
                                    self.vectors_readonly)
        return self._dense

    def dense_in_default(self) -> bool:
        """Whether recall without --tiers asks the dense tier: an embedder is
        configured and vectors exist. A state directory nothing was embedded
        in pays no model load and no numpy import (every fresh `ars recall`)."""
        if self.settings.embedder == "off":
            return False
        if self._dense is not None and self._dense._index is not None and self._dense._index.n:
            return True
        from core.memory.embed import VECTORS_FILE, has_vectors

        return has_vectors(self.state_dir / VECTORS_FILE)

    @property
    def embeddings(self):
        """The embedding consumer (core/consumers/embeddings.py)."""
        if self._embed_sync is None:
            from core.consumers.embeddings import EmbedSync

            self._embed_sync = EmbedSync(self)
        return self._embed_sync

    def tier(self, name: str) -> Tier | None:
        if name == "sqlite":
            return self.sqlite
        if name == "neo4j":
            return self.neo4j
        if name == "dense":
            return self.dense
        return self.files

    def close(self) -> None:
        for name, pool in self._pools.items():
            # the SQLite tiers' threads hold a connection each (thread-local): waiting for them
            # (their searches stop at the deadline) closes those before close() returns, so the
            # WAL is gone and the files stay still (a copy of the state made now is whole)
            pool.shutdown(wait=name in ("sqlite", "dense"), cancel_futures=True)
        if self._sqlite is not None:
            self._sqlite.close()
        if self._vectors is not None:
            self._vectors.close()
        if self._neo4j is not None and not self._pools["neo4j"].busy():
            # a search still connecting keeps the driver: closing it under the
            # thread would only turn its timeout into an error; exit frees both
            self._neo4j.close()

    # -- the write path: ledger (acknowledges), then SQLite; Neo4j by sync ------
    @property
    def sync(self):
        if self._sync is None:
            from core.consumers.neo4j_push import Neo4jSync

            self._sync = Neo4jSync(self)
        return self._sync

    def writer(self, who: str = "", on_wait=None, blocking: bool = True):
        """The state directory's writer lock (``core/infra/writer_lock.py``)."""
        return writer_lock(self.state_dir, who, blocking=blocking, on_wait=on_wait)

    def store(self, episodes: Iterable[Episode]) -> list[str]:
        """Remember episodes durably; returns their ledger event ids.

        One ledger append and one fsync for the whole batch (group commit):
        when this returns the batch is acknowledged. SQLite is applied in the
        same call, its ledger cursor in the same transaction, under the
        writer lock so no other process applies in between. Neo4j is left to
        the sync worker (``sync.run()``), so a Neo4j outage never blocks this.
        """
        ident = self.identity
        # every episode carries where it was written: this namespace and host (its
        # agent stays as parsed: ARS_AGENT and the source fill an empty one when read)
        eps = [ep.model_copy(update={"namespace": ident.namespace, "host": ident.host}) for ep in episodes]
        gone = forgotten_set(self.state_dir)
        if gone:  # a forgotten episode or session is never remembered again (a re-ingest of its file)
            eps = [ep for ep in eps if not gone.covers(ep.id, ep.session_id)]
        if not eps:
            return []
        events = [Event(content_id("ep", ep.model_dump(mode="json")), EPISODE_EVENT, ep.model_dump(mode="json"))
                  for ep in eps]
        with self.writer():
            if not self._bound:
                # a state directory made by this write: record its namespace before its first event
                if not (self.state_dir / TEAM_FILE).exists():
                    bind_identity(self.state_dir, ident)
                self._bound = True
            start, end = self.ledger.append(events)
            ids = [e.event_id for e in events]
            if self.sqlite.applied_offset() == start:
                self.sqlite.upsert(eps, ids, ledger_offset=end, last_event_id=ids[-1])
            else:
                # events of other kinds (loop transitions) or a crashed writer's: apply in order
                self._apply_ledger(self.sqlite)
        return ids

    def recover(self, *, wait: bool = True) -> int:
        """Apply ledger events SQLite has not applied (after a crash between
        the ledger fsync and the SQLite commit). Idempotent; cheap when caught up.

        ``wait=False`` (opening a state directory to read it) does nothing
        while another process holds the writer lock: that writer applies its
        own events, and a reader must never wait for a long ingest."""
        self.finish_forget(wait=wait)  # a forget a crash interrupted is finished before anything is read
        try:
            if self.sqlite.applied_offset() >= self.ledger.size():
                return 0
            with self.writer(blocking=wait):
                return self._apply_ledger(self.sqlite)
        except WriterBusy:
            return 0

    def finish_forget(self, *, wait: bool = True):
        """Finish a forget a crash interrupted (core/govern/forget.py); None when none was."""
        from core.govern.forget import finish_pending
        from core.govern.rescan import PENDING, finish_pending as finish_redact

        if (self.state_dir / PENDING).exists():  # an interrupted `ars redact --scan`, the same way
            finish_redact(self, wait=wait)
        return finish_pending(self, wait=wait)

    def _apply_ledger(self, store: SqliteStore) -> int:
        """Apply to ``store`` every episode event after its cursor. A line that
        is not a valid event is skipped and kept in ``ledger_problems`` (file,
        line and what is wrong): one bad line never stops the rest."""
        start = store.applied_offset()
        if start >= self.ledger.size():
            return 0
        batch: list[Episode] = []
        ids: list[str] = []
        applied = 0
        end = start
        problems: list[BadEvent] = []
        for entry in self.ledger.read(start, on_bad=problems.append):
            end = entry.end
            if entry.type == EPISODE_EVENT:
                try:
                    batch.append(Episode.model_validate(entry.data))
                    ids.append(entry.event_id)
                except (ValidationError, ValueError, TypeError, RecursionError) as exc:
                    why = first_error(exc, "data") if isinstance(exc, ValidationError) else one_line(exc)
                    problems.append(BadEvent(entry.offset, self.ledger.line_of(entry.offset),
                                             f"episode event {entry.event_id} skipped: {why}"))
            elif entry.type == FORGET_EVENT:
                # the tombstone: what came before it goes (``ars rebuild`` keeps it forgotten)
                store.upsert(batch, ids, ledger_offset=entry.offset, last_event_id=ids[-1] if ids else "")
                applied += len(batch)
                batch, ids = [], []
                store.forget([str(i) for i in entry.data.get("ids") or []])
                self._tombstones.add(entry.data)
            if len(batch) >= 1000:
                store.upsert(batch, ids, ledger_offset=end, last_event_id=ids[-1])
                applied += len(batch)
                batch, ids = [], []
        if end > start:
            store.upsert(batch, ids, ledger_offset=end, last_event_id=ids[-1] if ids else "")
            applied += len(batch)
        self.ledger_problems.extend(problems)
        return applied

    def rebuild_sqlite(self) -> int:
        """Recreate ``memory.sqlite`` from the ledger; returns episodes applied.

        The new store is built beside the old one (``memory.sqlite.new``) and
        swapped in only when complete: a failure or a crash mid-rebuild leaves
        the old store in place (or, between the two renames, none, which the
        next start rebuilds from the ledger). Bad ledger lines are skipped and
        listed in ``ledger_problems``."""
        path = self.state_dir / "memory.sqlite"
        fresh = path.with_name("memory.sqlite.new")
        with self.writer("ars rebuild"):
            self.ledger._check_file()
            for p in _sqlite_files(fresh):
                p.unlink(missing_ok=True)
            self.ledger_problems = []
            store = SqliteStore(fresh)
            self._tombstones = Forgotten()
            try:
                applied = self._apply_ledger(store)
            finally:
                store.close()  # the last connection: its WAL is merged and removed
            if self._tombstones:
                merge_forgotten(self.state_dir, self._tombstones.__dict__)  # forgotten.json as the ledger says
            if self._sqlite is not None:
                self._sqlite.close()
                self._sqlite = None
            self._prepared.pop("sqlite", None)
            old = path.with_name("memory.sqlite.old")
            for p in _sqlite_files(old):
                p.unlink(missing_ok=True)
            # the old file goes with its -wal/-shm: a WAL left beside the new file would be replayed into it
            for p, q in zip(_sqlite_files(path), _sqlite_files(old)):
                if p.exists() or p.is_symlink():
                    p.rename(q)
            fresh.rename(path)
            fsync_dir(self.state_dir)
            for p in _sqlite_files(old):
                if p.is_dir():
                    shutil.rmtree(p)
                else:
                    p.unlink(missing_ok=True)
        return applied

    def sync_neo4j(self, max_seconds: float = 60.0, retries: int = 3):
        """Drain the ledger into Neo4j now (best effort); None when not configured."""
        if self.neo4j is None:
            return None
        report = self.sync.run(max_seconds=max_seconds, retries=retries)
        if report.ok and report.applied:
            self.shared_breaker.record("ok")  # it took writes: recall may ask it again
        if report.applied:
            # new data can invalidate Neo4j's cached plan; re-plan off the read path
            self._warming.append(self._pools["neo4j"].submit(self.neo4j.warm))
        return report

    def settle(self, timeout: float = 60.0) -> None:
        """Wait for background warm-ups (after an ingest), so the next recall
        does not pay a cold query plan."""
        pending, self._warming = self._warming, []
        for fut in pending:
            try:
                fut.result(timeout=timeout)
            except Exception:  # noqa: BLE001 - warming is best effort
                pass

    # -- recall -----------------------------------------------------------------
    def recall(self, query: str, k: int = 10, tiers: str | Sequence[str] | None = None,
               scope: "str | Scope | None" = None) -> RecallResult:
        if k < 1:
            raise BadQuery(f"k must be at least 1, got {k}")
        t0 = time.perf_counter()
        q = prepare_query(query)
        wanted = parse_tiers(tiers)
        q.scope = parse_scope(scope)
        depth = max(k, scoring.FUSION_DEPTH)  # the order must not depend on k
        ask = depth * OVERFETCH if q.scope else depth  # post-filtered tiers need more candidates
        reports: dict[str, TierReport] = {}
        primary = wanted or ["neo4j", "sqlite", *(["dense"] if self.dense_in_default() else [])]
        self.prepare(primary if wanted else [*primary, "files"])
        start = time.monotonic()  # the tiers' clocks start once their set-up is done
        reports.update(self._fan_out(q, ask, primary, start))
        if wanted is None:
            if any(reports[t].status in ANSWERED for t in primary):
                reports["files"] = TierReport(tier="files", status="skipped",
                                              error="fallback only: an index tier answered")
            else:
                # same clock as the index tiers: recall answers within the largest deadline
                reports.update(self._fan_out(q, ask, ["files"], start))
        ordered = [reports[t] for t in TIER_NAMES if t in reports]
        origins = self._origins({h.episode_id for r in ordered for h in r.hits if not h.origin})
        if q.scope:
            for r in ordered:
                r.hits = keep_in_scope(r.hits, q.scope, origins, depth)
        gone = forgotten_set(self.state_dir)
        if gone.ids:
            # the last word over every tier: a store not yet reached by a forget
            # (Neo4j before the next sync, a long-running dense index) never answers with it
            for r in ordered:
                r.hits = [h for h in r.hits if h.episode_id not in gone.ids]
        hits = fuse({r.tier: r.hits for r in ordered if r.hits}, k)
        for r in ordered:  # each tier's report shows its own top k
            del r.hits[k:]
        for h in hits:  # where each memory came from (--json, the dashboard)
            h.origin = next((t.origin for t in h.per_tier.values() if t.origin), None) or origins.get(h.episode_id, {})
        degraded = any(r.status in FAILED for r in ordered)
        return RecallResult(query=q.text, tokens=q.tokens, k=k, tiers=ordered, hits=hits,
                            degraded=degraded, latency_ms=(time.perf_counter() - t0) * 1000)

    def _origins(self, ids: set[str]) -> dict[str, dict[str, str]]:
        """namespace, host and agent of episodes, from SQLite (it holds this
        host's episodes and every pulled one); {} when SQLite cannot say."""
        if not ids:
            return {}
        try:
            return self.sqlite.origins(list(ids), self.identity)
        except Exception:  # noqa: BLE001 - origins are a label; recall answers without them
            return {}

    def prepare(self, names: Sequence[str] | None = None) -> None:
        """One-time set-up of the tiers about to be asked, before any tier's
        clock starts: imports, the Neo4j driver, the SQLite connection of the
        pool thread that will search and its statistics.

        In a fresh process (every CLI call and agent hook) this set-up costs
        hundreds of ms, far more than a search; done inside the fan-out it ran
        on the tiers' clocks, and on a busy CPU the Neo4j import alone used up
        SQLite's deadline. Each tier's set-up runs once per process; a set-up
        failure becomes that tier's status, never the others'.

        Without ``names``: the tiers a recall without --tiers asks (dense only
        once vectors exist: a long-running server loads no model for nothing)."""
        if names is None:
            names = [t for t in TIER_NAMES if t != "dense" or self.dense_in_default()]
        for name in names:
            if name in self._prepared:
                continue
            failure: TierReport | None = None
            if name == "neo4j" and self._neo4j is None and self.settings.neo4j_uri:
                verdict = self.shared_breaker.check()
                if verdict.skip:  # another process found it down a moment ago: skip the import too
                    self._prepared[name] = TierReport(tier=name, status="down", error=verdict.reason)
                    continue
            try:
                tier = self.tier(name)
                ready = getattr(tier, "prepare", None)
                if ready is not None:
                    # on the tier's own pool: the thread that will search has its connection
                    budget = max(PREPARE_TIMEOUT, PREPARE_PER_DEADLINE * self.deadlines.get(name, 0.0))
                    self._pools[name].submit(ready).result(timeout=budget)
            except Exception as exc:  # noqa: BLE001 - a store that cannot open is a status
                failure = TierReport(tier=name, status="error", error=one_line(exc))
            self._prepared[name] = failure

    def _fan_out(self, q: Query, k: int, names: Sequence[str], start: float) -> dict[str, TierReport]:
        futures: dict[str, Future] = {}
        out: dict[str, TierReport] = {}
        for name in names:
            failure = self._prepared.get(name)
            if failure is not None:
                self._prepared.pop(name)  # try again next time: the store may be back
                out[name] = failure
                continue
            try:
                tier = self.tier(name)
            except Exception as exc:  # noqa: BLE001 - a store that cannot open is a status
                out[name] = TierReport(tier=name, status="error", error=one_line(exc))
                continue
            if tier is None:
                out[name] = TierReport(tier=name, status="skipped", error=_not_configured(name))
                continue
            deadline = start + self.deadlines[name]
            futures[name] = self._pools[name].submit(tier.search, q, k, deadline)
        for name, fut in futures.items():
            deadline = start + self.deadlines[name]
            try:
                out[name] = fut.result(timeout=max(0.0, deadline - time.monotonic()))
            except FutureTimeout:
                fut.cancel()
                msg = f"no answer within {self.deadlines[name] * 1000:.0f} ms"
                if name == "neo4j" and self._neo4j is not None:
                    self._neo4j.breaker.failure(msg, hard=False)
                out[name] = TierReport(tier=name, status="timeout", error=msg,
                                       latency_ms=(time.monotonic() - start) * 1000)
            if name == "neo4j" and not out[name].error.startswith("CircuitOpen"):
                # what Neo4j itself said (not this process's open breaker), for the next processes
                self.shared_breaker.record(out[name].status, out[name].error)
        return out

    def health(self) -> list[TierReport]:
        out = []
        for name in TIER_NAMES:
            try:
                tier = self.tier(name)
            except Exception as exc:  # noqa: BLE001
                out.append(TierReport(tier=name, status="error", error=one_line(exc)))
                continue
            if tier is None:
                out.append(TierReport(tier=name, status="skipped", error=_not_configured(name)))
            else:
                out.append(tier.health())
        return out

    # -- explain ------------------------------------------------------------------
    def explain(self, query: str, episode_id: str, k: int = 10,
                tiers: str | Sequence[str] | None = None) -> Explanation:
        """Why recall did or did not return ``episode_id`` for ``query``."""
        q = prepare_query(query)
        wanted = parse_tiers(tiers) or list(TIER_NAMES)
        result = self.recall(query, k=k, tiers=tiers)
        text = self._episode_text(episode_id)
        matched = self._matched(q, text) if text is not None else []
        missing = [t for t in q.tokens if t not in matched]
        out: list[TierExplanation] = []
        for name in wanted:
            report = result.tier(name)
            out.append(self._explain_tier(name, q, episode_id, k, report, matched, missing))
        fused_rank = next((h.rank for h in result.hits if h.episode_id == episode_id), None)
        if fused_rank is not None:
            verdict = f"returned at fused rank {fused_rank} of {k}"
        else:
            ranked = [t for t in out if t.rank is not None]
            if not any(t.stored for t in out):
                verdict = "not stored in any tier: ingest it first (ars ingest)"
            elif ranked and all(t.rank > k for t in ranked):
                best = min(ranked, key=lambda t: t.rank)
                verdict = f"cut off: best tier rank {best.rank} ({best.tier}) is below k={k}; raise -k or add distinctive words"
            elif not matched and any(t.tier == "dense" and "not embedded yet" in t.verdict for t in out):
                verdict = ("stored, but it shares no query token and is not embedded yet: "
                           "`ars sync run` lets the dense tier find it by meaning")
            elif not matched:
                verdict = "stored, but it shares no query token: the words differ (try the episode's own terms)"
            else:
                verdict = "dropped in the merge: other episodes ranked higher across tiers"
        return Explanation(query=q.text, episode_id=episode_id, tokens=q.tokens, tiers=out,
                           fused_rank=fused_rank, verdict=verdict)

    def _episode_text(self, episode_id: str) -> str | None:
        try:
            ep = self.sqlite.get(episode_id)
            if ep is not None:
                return ep.search_text()
        except Exception:  # noqa: BLE001 - explain works from whatever store is alive
            pass
        return None

    @staticmethod
    def _matched(q: Query, text: str) -> list[str]:
        terms = set(index_terms(text))
        low = text.lower()
        return [t for t in q.tokens if (term_of(t) in terms) or (t in low)]

    def _explain_tier(self, name: str, q: Query, episode_id: str, k: int, report: TierReport | None,
                      matched: list[str], missing: list[str]) -> TierExplanation:
        base = dict(tier=name, k=k, matched_tokens=matched, missing_tokens=missing)
        if report is not None and report.status == "skipped" and name != "files":
            return TierExplanation(status="skipped", stored=None, verdict=f"{name} skipped: {report.error}", **base)
        if report is not None and report.status in FAILED and not report.hits:
            return TierExplanation(status=report.status, stored=None,
                                   verdict=f"{name} {report.status}: {report.error}", **base)
        tier = self.tier(name)
        if tier is None:
            return TierExplanation(status="skipped", stored=None, verdict=f"{name} not configured", **base)
        status = report.status if report is not None else "skipped"
        try:
            look: Lookup = tier.lookup(q, episode_id, time.monotonic() + EXPLAIN_DEADLINE)
        except Exception as exc:  # noqa: BLE001
            return TierExplanation(status="error", stored=None, verdict=f"{name} could not be asked: {one_line(exc)}", **base)
        if not look.stored:
            return TierExplanation(status=status, stored=False, verdict=look.verdict or f"not stored in {name}",
                                   **base)
        if look.rank is None:
            return TierExplanation(status=status, stored=True,
                                   verdict=f"stored in {name} but not matched: it contains none of the query's terms",
                                   **base)
        in_report = report is not None and any(h.episode_id == episode_id for h in report.hits)
        if in_report:
            verdict = f"returned by {name} at rank {look.rank}"
        elif look.rank > k:
            verdict = f"ranked {look.rank} in {name}, below the cut-off k={k}"
        elif status == "skipped":
            verdict = f"would rank {look.rank} in {name}, but {name} was not consulted ({report.error if report else 'not asked'})"
        else:
            verdict = f"ranked {look.rank} in {name} when asked alone"
        verdict += _context_note(look.breakdown or {}, look.raw_score)
        return TierExplanation(status=status, stored=True, raw_score=look.raw_score, rank=look.rank,
                               breakdown=look.breakdown or {}, verdict=verdict, **base)


def _context_note(breakdown: dict[str, float], score: float | None) -> str:
    """What the session context did for a tier's score, as part of a verdict."""
    ctx = breakdown.get("context", 0.0)
    if ctx <= 0 or not score:
        return ""
    own = sum(v for name, v in breakdown.items() if name in ("bm25", "lucene", "scan"))
    how = "only through" if own <= 1e-6 else "partly through"
    return (f"; matched {how} its session context (neighbouring episodes' words): "
            f"context {ctx:.3g} of score {score:.3g}")
