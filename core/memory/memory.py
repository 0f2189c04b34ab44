"""Memory: the tiers of one state directory, and its write path.

``Memory`` holds the stores (core/memory/stores.py), the tiers over them and
their pools; writes go ledger first (the only write that acknowledges), then
SQLite (core/memory/apply.py); Neo4j and the vectors follow through the
deferred consumers (core/consumers, run by their orchestrator). Recovery
applies what a crash left in the ledger only; ``rebuild_sqlite`` recreates
SQLite from the ledger. Recall is ``Recall`` (core/memory/recall.py), explain
is ``Explain`` (core/memory/explain.py).
"""

from __future__ import annotations

import shutil
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Iterable, Mapping

from core.config import Settings
from core.events import EPISODE_EVENT
from core.govern.tombstone import Forgotten, load as forgotten_set, merge as merge_forgotten
from core.infra.disk_full import told_as_disk_full
from core.infra.fsutil import fsync_dir
from core.infra.pools import DaemonPool
from core.infra.shared_breaker import SharedBreaker
from core.infra.sqlite_lib import sqlite3
from core.infra.writer_lock import WriterBusy
from core.ledger.ledger import BadEvent, Event, content_id
from core.memory.apply import apply_ledger, apply_written
from core.memory.explain import Explain
from core.memory.recall import Recall
from core.memory.stores import Stores
from core.memory.tiers.files import FilesTier
from core.memory.tiers.sqlite import SqliteStore
from core.models import TIER_NAMES, Episode, TierReport
from core.team.identity import TEAM_FILE, bind as bind_identity


def _sqlite_files(path: Path) -> list[Path]:
    """A database file and its WAL and shared-memory side files."""
    return [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]


class Memory(Recall, Explain):
    """The tiers of one state directory."""

    def __init__(self, settings: Settings):
        self.stores = Stores(settings)
        self.settings = settings
        self.state_dir = self.stores.state_dir
        self._warming: list[Future] = []
        self._sync = None  # the consumers' orchestrator (core/consumers/orchestrator.py), built on first use
        self._dense = None  # the dense tier (core/memory/tiers/dense/), built on first use
        self._bound = False  # team.json written (checked once per process, at the first store)
        self.ledger_problems: list[BadEvent] = []  # lines the last apply skipped
        self.rebuild_resumed_at = 0  # the ledger offset the last rebuild went on from (0: from the start)
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

    # -- the stores (core/memory/stores.py), opened lazily so one broken store never stops the others
    @property
    def identity(self):
        """The namespace and host this state directory writes as (the push may change it)."""
        return self.stores.identity

    @identity.setter
    def identity(self, ident) -> None:
        self.stores.identity = ident

    @property
    def ledger(self):
        return self.stores.ledger

    @property
    def sqlite(self) -> SqliteStore:
        return self.stores.sqlite

    @property
    def neo4j(self):
        """The Neo4j store, or None when no URI is configured."""
        return self.stores.neo4j

    @property
    def vectors(self):
        """The vector store, created if missing (the embedding consumer writes it)."""
        return self.stores.vectors

    def vectors_readonly(self):
        """The vector store; FileNotFoundError when nothing was embedded yet (a reader creates no file)."""
        return self.stores.vectors_readonly()

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

    def close(self) -> None:
        for name, pool in self._pools.items():
            # the SQLite tiers' threads hold a connection each (thread-local): waiting for them
            # (their searches stop at the deadline) closes those before close() returns, so the
            # WAL is gone and the files stay still (a copy of the state made now is whole)
            pool.shutdown(wait=name in ("sqlite", "dense"), cancel_futures=True)
        # a search still connecting keeps the Neo4j driver: closing it under the thread would
        # only turn its timeout into an error. It is closed when that search gives up (or exit
        # frees both), not left to the driver's destructor.
        neo4j_busy = self._pools["neo4j"].busy()
        self.stores.close(neo4j=not neo4j_busy)
        if neo4j_busy:
            self._pools["neo4j"].after_last(self.stores.close_neo4j)

    # -- the deferred consumers: one orchestrator decides when they run (core/consumers/orchestrator.py)
    @property
    def sync(self):
        """The consumers' orchestrator: the Neo4j push and team pull in turns, the embeddings."""
        if self._sync is None:
            from core.consumers.orchestrator import Orchestrator

            self._sync = Orchestrator(self.stores)
        return self._sync

    @property
    def embeddings(self):
        """The embedding consumer (core/consumers/embeddings.py)."""
        return self.sync.embeddings

    def sync_neo4j(self, max_seconds: float = 60.0, retries: int = 3):
        """Drain the ledger into Neo4j now (best effort); None when not configured."""
        report = self.sync.after_write(max_seconds=max_seconds, retries=retries)
        if report is None:
            return None
        if report.ok and report.applied:
            self.shared_breaker.record("ok")  # it took writes: recall may ask it again
        if report.applied:
            # new data can invalidate Neo4j's cached plan; re-plan off the read path
            self._warming.append(self._pools["neo4j"].submit(self.neo4j.warm))
        return report

    # -- the write path: ledger (acknowledges), then SQLite; Neo4j by the consumers
    def writer(self, who: str = "", on_wait=None, blocking: bool = True):
        """The state directory's writer lock (``core/infra/writer_lock.py``)."""
        return self.stores.writer(who, on_wait=on_wait, blocking=blocking)

    def store(self, episodes: Iterable[Episode], terms: Mapping[str, str] | None = None) -> list[str]:
        """Remember episodes durably; returns their ledger event ids.

        One ledger append and one fsync for the whole batch (group commit):
        when this returns the batch is acknowledged. SQLite is applied in the
        same call, its ledger cursor in the same transaction, under the
        writer lock so no other process applies in between. Neo4j is left to
        the consumers (``sync.run()``), so a Neo4j outage never blocks this.
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
            starts, end = self.ledger.append_each(events)
            ids = [e.event_id for e in events]
            # a failure leaves these events in the ledger: SQLite catches up on the next start
            with told_as_disk_full(self.state_dir, (sqlite3.Error,)):
                if self.sqlite.applied_offset() == starts[0]:
                    apply_written(self.sqlite, eps, ids, starts, end, terms)
                else:
                    # events of other kinds (loop transitions) or a crashed writer's: apply in order
                    self._apply_ledger(self.sqlite)
        return ids

    def recover(self, *, wait: bool = True) -> int:
        """Apply ledger events SQLite has not applied (after a crash between
        the ledger fsync and the SQLite commit). Idempotent; cheap when caught up.
        (A forget or redaction a crash interrupted is finished first by the
        caller: core/govern/interrupted.py.)

        ``wait=False`` (opening a state directory to read it) does nothing
        while another process holds the writer lock: that writer applies its
        own events, and a reader must never wait for a long ingest."""
        try:
            if self.sqlite.applied_offset() >= self.ledger.size():
                return 0
            with self.writer(blocking=wait):
                return self._apply_ledger(self.sqlite)
        except WriterBusy:
            return 0

    def _apply_ledger(self, store: SqliteStore, progress: Callable[[int, int], None] | None = None) -> int:
        """Apply to ``store`` every episode event after its cursor (core/memory/apply.py);
        skipped lines are kept in ``ledger_problems``."""
        return apply_ledger(self.ledger, store, self.ledger_problems, self._tombstones, progress)

    def rebuild_sqlite(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Recreate ``memory.sqlite`` from the ledger; returns episodes applied.

        The new store is built beside the old one (``memory.sqlite.new``) and
        swapped in only when complete: a failure or a crash mid-rebuild leaves
        the old store in place (or, between the two renames, none, which the
        next start rebuilds from the ledger). A rebuild that was stopped
        (Ctrl-C, a crash) goes on from the ledger offset its ``.new`` store
        reached: each batch commits with its cursor (``rebuild_resumed_at``).
        Bad ledger lines are skipped and listed in ``ledger_problems``.
        ``progress(ledger bytes applied, ledger size)`` after each batch."""
        path = self.state_dir / "memory.sqlite"
        fresh = path.with_name("memory.sqlite.new")
        with self.writer("ars rebuild"):
            self.ledger._check_file()
            self.ledger_problems = []
            store = self._resumable(fresh)
            self.rebuild_resumed_at = store.applied_offset()
            self._tombstones = Forgotten()
            try:
                applied = self._apply_ledger(store, progress)
            finally:
                store.close()  # the last connection: its WAL is merged and removed
            if self._tombstones:
                merge_forgotten(self.state_dir, self._tombstones.__dict__)  # forgotten.json as the ledger says
            self.stores.reopen_sqlite()
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

    @staticmethod
    def _resumable(fresh: Path) -> SqliteStore:
        """The ``.new`` store a stopped rebuild left, to go on with; else an empty one."""
        if fresh.exists():
            try:
                store = SqliteStore(fresh)
                if store.applied_offset() > 0:
                    return store
                store.close()
            except sqlite3.Error:
                pass  # torn or not a database: built again from the start
        for p in _sqlite_files(fresh):
            p.unlink(missing_ok=True)
        return SqliteStore(fresh)

    def settle(self, timeout: float = 60.0) -> None:
        """Wait for background warm-ups (after an ingest), so the next recall
        does not pay a cold query plan."""
        pending, self._warming = self._warming, []
        for fut in pending:
            try:
                fut.result(timeout=timeout)
            except Exception:  # noqa: BLE001 - warming is best effort
                pass
