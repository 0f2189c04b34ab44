"""The Neo4j push: the ledger into Neo4j, deferred; backfill and host rename.

Neo4j is a derived store: the push reads ``ledger.jsonl`` from its cursor in
``sync.json`` (core/ledger/cursors.py) and MERGEs the episodes it finds
(idempotent by episode id, so a replayed batch changes nothing), then moves
the cursor. It never blocks ingestion: ingestion is acknowledged by the ledger
fsync and applied to SQLite at once; Neo4j catches up when it can, retried
with backoff. When it runs, and its turns with the team pull, is decided by
the orchestrator (core/consumers/orchestrator.py).
"""

from __future__ import annotations

import os
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

from core.consumers.consumer import SyncReport
from core.errors import BadQuery
from core.events import EPISODE_EVENT, FORGET_EVENT
from core.infra.breaker import CircuitOpen
from core.infra.prefetch import prefetch
from core.infra.timed_flock import flock_timed
from core.infra.sqlite_lib import sqlite3
from core.ledger.cursors import PushCursor, PushCursorFile
from core.memory.tiers.base import one_line
from core.memory.tiers.neo4j import WRITE_BATCH, GraphBatch, is_transient
from core.models import Episode
from core.team import local as team_local
from core.team.identity import HostClaimed

if TYPE_CHECKING:
    from core.ledger.ledger import Ledger
    from core.memory.stores import Stores


@dataclass
class _Chunk:
    end: int  # ledger offset after the chunk
    last_id: str  # its last event id
    events: int  # episode events in it
    batch: GraphBatch | None  # None: no episode events (other event types only)
    forget: "tuple[str, dict] | None" = None  # a tombstone (event id, data): core/govern/graph_forget.py


@contextmanager
def push_lock(state_dir: Path):
    fd = os.open(Path(state_dir) / ".push.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        flock_timed(fd, Path(state_dir) / ".push.lock", default=3_600.0)  # one push at a time; a backfill is long
        yield
    finally:
        os.close(fd)  # closing releases the lock


class RenameFailed(RuntimeError):
    """``--rename`` could not reach the graph to claim the new host id."""


def with_seqs(batch: GraphBatch, seqs: dict[str, int], fence: "tuple[int, str] | None" = None) -> GraphBatch:
    batch.seqs = seqs
    batch.fence = fence
    return batch


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class Neo4jPush:
    """The Neo4j push (core/consumers/consumer.py): the ledger, the stores
    (Neo4j to write, SQLite for index terms and contexts), the ``sync.json`` cursor."""

    name = "neo4j push"

    def __init__(self, ledger: "Ledger", stores: "Stores", cursor: PushCursorFile):
        self.stores = stores
        self.ledger = ledger
        self.cursor = cursor
        self.lock = threading.Lock()  # one push at a time in this process (push_lock: across processes)
        self._renamed: list[str] = []  # pushed ids another host had first (their episodes are pulled again)

    # -- cursor -----------------------------------------------------------------
    def state(self) -> PushCursor:
        return self.cursor.load()

    def save(self, st: PushCursor, pending: int | None = None) -> None:
        self.cursor.save(st, pending)

    def pending(self, offset: int | None = None) -> int:
        """Episode events in the ledger after the cursor."""
        start = self.state().offset if offset is None else offset
        return sum(1 for _ in self.ledger.read(start, types=(EPISODE_EVENT,)))

    # -- applying ----------------------------------------------------------------
    def _chunks(self, offset: int, max_events: int) -> Iterator[_Chunk]:
        """The ledger after ``offset`` in chunks of up to ``max_events`` episode
        events, each with its write batch built (a later version of an episode
        in the same chunk wins)."""
        latest: dict[str, tuple[Episode, str]] = {}  # id -> (episode, the event that wrote it)
        seqs: dict[str, int] = {}  # id -> where its event ends in the ledger: its place in the push order
        fence = None  # the chunk's last episode event: where it starts, its id (the claim's fence)
        start, end, last_id, n = offset, offset, "", 0
        for entry in self.ledger.read(offset):
            if entry.type == FORGET_EVENT:
                # what came before goes first, then the tombstone alone (its own cursor step)
                if end != start:
                    yield _Chunk(end, last_id, n, with_seqs(self._batch(latest), seqs, fence) if latest else None)
                yield _Chunk(entry.end, entry.event_id, 0, None, (entry.event_id, entry.data))
                latest, seqs, n, fence, start, end, last_id = {}, {}, 0, None, entry.end, entry.end, entry.event_id
                continue
            if entry.type == EPISODE_EVENT:
                ep = Episode.model_validate(entry.data)
                latest[ep.id] = (ep, entry.event_id)
                seqs[ep.id] = entry.end
                fence = (entry.offset, entry.event_id)
                n += 1
            end, last_id = entry.end, entry.event_id
            if n >= max_events:
                yield _Chunk(end, last_id, n, with_seqs(self._batch(latest), seqs, fence))
                latest, seqs, n, start = {}, {}, 0, end
        if end != start:
            yield _Chunk(end, last_id, n, with_seqs(self._batch(latest), seqs, fence) if latest else None)

    def _batch(self, latest: dict[str, tuple[Episode, str]]) -> GraphBatch:
        # SQLite applied these events at ingest and stored their index terms:
        # reuse them where it holds the same version (most of the tokenising)
        # and their session contexts, with the new contexts of the stored
        # episodes next to them (a neighbour that arrived later changed them)
        try:
            terms = self.stores.sqlite.index_terms_of({eid: event for eid, (_ep, event) in latest.items()})
            contexts = self.stores.sqlite.contexts_around(list(latest))
        except sqlite3.Error:
            terms, contexts = {}, None  # SQLite is not needed to sync: tokenise here instead
        return GraphBatch.of([ep for ep, _event in latest.values()], terms, contexts)

    def _drain(self, report: SyncReport, until: float, max_events: int) -> tuple[bool, bool]:
        """Apply chunks from the cursor until caught up or ``until`` passes; the
        next chunk is read and built while this one commits. Returns (caught
        up, wrote anything). Raises on a Neo4j failure, with the cursor after
        the last chunk that committed."""
        store = self.stores.neo4j
        assert store is not None
        st = self.state()
        wrote = False
        for chunk in prefetch(self._chunks(st.offset, max_events), name="ars-sync-read"):
            if chunk.forget is not None:
                from core.govern.graph_forget import drop

                store.breaker.before_call()
                try:
                    drop(self.stores, store, *chunk.forget)
                except Exception as exc:
                    if not is_transient(exc):
                        store.breaker.failure(one_line(exc))
                    raise
                store.breaker.success()
                wrote = True
            if chunk.batch is not None:
                store.breaker.before_call()
                try:
                    self._renamed += store.write(chunk.batch)
                except HostClaimed:
                    raise  # a refusal, not an outage: the breaker stays closed
                except Exception as exc:
                    if not is_transient(exc):  # contention is not an outage: retried, breaker left closed
                        store.breaker.failure(one_line(exc))
                    raise
                store.breaker.success()
                wrote = True
            st.offset, st.last_event_id = chunk.end, chunk.last_id
            st.applied_total += len(chunk.batch or ())
            st.failed, st.last_error, st.last_ok = 0, "", _now()
            st.last_attempt = st.last_ok
            self.save(st)
            report.applied += chunk.events
            report.batches += 1
            if time.monotonic() >= until:
                return False, wrote
        return True, wrote

    def push(self, report: SyncReport, until: float, deadline: float, retries: int, backoff: float,
              max_events: int) -> tuple[bool, bool]:
        """``_drain`` until ``until``, retried with exponential backoff until
        ``deadline`` (the run's); returns (caught up, wrote)."""
        attempt, before = 0, report.applied
        while True:
            try:
                done, _ = self._drain(report, until, max_events)
                return done, report.applied > before
            except HostClaimed:
                raise  # run() reports it: retrying cannot help
            except Exception as exc:  # noqa: BLE001 - recorded, retried, reported
                attempt += 1
                self._record_failure(one_line(exc))
                if attempt > retries or time.monotonic() >= deadline:
                    report.ok, report.error = False, one_line(exc)
                    return False, report.applied > before
                time.sleep(min(backoff * 2 ** (attempt - 1), 5.0))

    # -- the claim on this host id (core/team/claim.py) ----------------------------
    def claimed(self, report: SyncReport, retries: int = 0, backoff: float = 0.5,
                 deadline: float | None = None) -> bool:
        """Claim this host id before anything is written (the push lock is
        held). False with the report filled in: refused (``refused``, one
        line), or the graph could not be asked (retried like a push)."""
        from core.team.claim import claim, ensure_instance

        store = self.stores.neo4j
        assert store is not None
        attempt = 0
        while True:
            try:
                ident = ensure_instance(self.stores.state_dir, self.stores.identity)
                self.stores.identity = ident
                store.breaker.before_call()
                got = claim(store, ident, self.ledger, self.stores.state_dir)
                store.breaker.success()
                store.refused = ""
                break
            except HostClaimed as exc:
                store.breaker.success()  # the graph answered
                self.refuse(report, str(exc))
                return False
            except Exception as exc:  # noqa: BLE001 - recorded, retried, reported like a push
                attempt += 1
                if not is_transient(exc) and not isinstance(exc, CircuitOpen):
                    store.breaker.failure(one_line(exc))
                self._record_failure(one_line(exc))
                if attempt > retries or deadline is None or time.monotonic() >= deadline:
                    report.ok, report.error = False, one_line(exc)
                    return False
                time.sleep(min(backoff * 2 ** (attempt - 1), 5.0))
        st = self.state()
        if (got.fresh or got.keyless) and st.offset:
            # the graph records no push of this host (its part was cleared, or the
            # graph lost), or an older ARS pushed it unsigned (its key is declared
            # now: core/team/declare.py): the whole ledger goes out again, signed
            # (MERGEs: nothing doubles)
            st.offset, st.last_event_id = 0, ""
            self.save(st)
        return True

    def refuse(self, report: SyncReport, line: str) -> None:
        report.ok, report.refused, report.error = False, True, line
        self._record_failure(line)
        if self.stores.neo4j is not None:
            self.stores.neo4j.refused = line  # the vector copy of this process writes nothing either

    def pull_partners(self, report: SyncReport) -> None:
        """Other hosts' episodes of the ids this push found they had first,
        pulled again under ``id@host`` (core/consumers/team_pull.py partners)."""
        renamed, self._renamed = sorted(set(self._renamed)), []
        if not renamed:
            return
        from core.consumers.team_pull import partners

        report.shared += len(renamed)
        try:
            report.pulled += partners(self.stores, renamed)
        except Exception as exc:  # noqa: BLE001 - the next push of those ids tries again
            if not report.pull_error:
                report.pull_error = f"pull of other hosts' episodes of the same ids: {one_line(exc)}"

    def rename(self, new_host: str) -> dict[str, Any]:
        """Give this state directory the host id ``new_host``, with a new
        instance (a copy of another directory stops sharing its instance),
        and claim it; the whole ledger goes out again under it with the next
        ``ars sync run``. If this directory held the old id (its instance
        and fence), that host's part of the graph and its claim are deleted
        (its episodes come back under the new id); a host id held by another
        directory, or by a copy of this one, is left as it is. Without Neo4j
        only this directory is re-bound (its next push claims the id)."""
        from dataclasses import replace

        from core.team.claim import claim, release
        from core.team.identity import bind, check_name, new_instance

        new_host = check_name("host id", new_host)
        old = self.stores.identity
        if new_host == old.host:
            raise BadQuery(f"this state directory already pushes as host {new_host!r}: nothing to rename")
        store = self.stores.neo4j
        ident = replace(old, host=new_host, instance=new_instance())
        released, note = False, ""
        with self.lock, push_lock(self.stores.state_dir):
            if store is not None:
                try:
                    store.breaker.before_call()
                    claim(store, ident, self.ledger, self.stores.state_dir)
                except HostClaimed:
                    raise  # another directory holds the new id: nothing changed
                except Exception as exc:  # noqa: BLE001 - one line, nothing changed
                    raise RenameFailed(f"cannot claim host id {new_host!r} (neo4j: {one_line(exc)}): nothing "
                                       "changed; run it again when the graph answers") from None
            # bound at once: the new id is claimed for this instance, and only team.json names it
            bind(self.stores.state_dir, ident)
            self.stores.identity = ident
            relabelled = team_local.rename_own(self.stores.sqlite.team(), old.host, new_host)
            st = self.state()
            st.offset, st.last_event_id, st.failed, st.last_error = 0, "", 0, ""
            self.save(st)
            if store is not None:
                store.host, store.instance, store.fence, store.refused = new_host, ident.instance, None, ""
                try:
                    released = bool(old.instance) and release(store, old, self.ledger)
                except Exception as exc:  # noqa: BLE001 - renamed all the same; the old part stays
                    note = f"the old host id's part of the graph stays (could not delete it: {one_line(exc)})"
        return {"old": old.host, "host": new_host, "namespace": ident.namespace, "instance": ident.instance,
                "released": released, "relabelled": relabelled, "claimed": store is not None, "note": note}

    def _record_failure(self, error: str) -> None:
        st = self.state()
        st.failed += 1
        st.last_error = error
        st.last_attempt = _now()
        self.save(st)

    def backfill(self, clear: bool = False, progress: "Callable[[int, int], None] | None" = None) -> SyncReport:
        """Rebuild Neo4j from SQLite (the store of record), then point the
        cursor at what SQLite has applied. Resumable: each batch's place is
        saved (``sync.json``), and a backfill that was stopped (Ctrl-C, a crash,
        Neo4j gone) goes on from there the next time; ``clear`` starts over.
        ``progress(done, total)`` after each batch."""
        t0 = time.monotonic()
        store = self.stores.neo4j
        report = SyncReport()
        if store is None:
            report.ok, report.error = False, "neo4j is not configured (set ARS_NEO4J_URI)"
            return report
        with self.lock, push_lock(self.stores.state_dir):
            # claimed first: a second directory with this host id deletes and writes nothing
            if not self.claimed(report):
                report.seconds = time.monotonic() - t0
                return report
            try:
                sqlite = self.stores.sqlite
                st = self.state()
                if clear or not st.backfill_rowid:
                    if clear:
                        store.clear_mine()  # this host's part of the namespace: never the team's
                    st.backfill_rowid, st.backfill_offset = 0, sqlite.applied_offset()
                else:
                    report.resumed = st.backfill_rowid
                offset, last = st.backfill_offset, st.backfill_rowid
                total, done = sqlite.count(), sqlite.count_upto(last)
                while True:
                    rows = sqlite.episodes_after(last, WRITE_BATCH)
                    if not rows:
                        break
                    # this host's own episodes only: pulled ones belong to the hosts that wrote them
                    own = team_local.own_ids(sqlite.team(), [e.id for _r, e in rows], self.stores.identity)
                    eps = [e for _r, e in rows if e.id in own]
                    if eps:
                        # seq: where the ledger stood; pulls after this read them (ties by id)
                        self._renamed += store.write(with_seqs(GraphBatch.of(eps), {e.id: offset for e in eps}))
                    report.applied += len(eps)
                    report.batches += 1
                    last, done = rows[-1][0], done + len(rows)
                    st.backfill_rowid = last
                    self.save(st)  # a stopped backfill resumes after this batch
                    if progress is not None:
                        progress(done, max(total, done))
                if report.applied:
                    store.refresh_index()
            except HostClaimed as exc:
                self.refuse(report, str(exc))
                report.seconds = time.monotonic() - t0
                return report
            except Exception as exc:  # noqa: BLE001
                self._record_failure(one_line(exc))
                report.ok, report.error = False, one_line(exc)
                report.seconds = time.monotonic() - t0
                return report
            st = self.state()
            if offset > st.offset:
                st.offset = offset
            st.backfill_rowid = st.backfill_offset = 0
            st.failed, st.last_error, st.last_ok = 0, "", _now()
            self.save(st)
            self.pull_partners(report)
        report.pending = self.pending()
        report.seconds = time.monotonic() - t0
        return report
