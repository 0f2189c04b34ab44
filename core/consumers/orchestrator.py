"""The one place that decides when the deferred consumers run.

The consumers (core/consumers/consumer.py) — the Neo4j push, the team pull,
the embeddings — each know how to consume from their cursor; this module
knows when: after a write (``after_write``, the push alone, no retries by the
caller's choice), on ``ars sync run`` (``run_all``: push and pull in turns,
then the embeddings), and the push-and-pull turns themselves (``run``). It is
``Memory.sync`` (core/memory/memory.py) and what ``ARS.sync_run`` calls.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from core.consumers.consumer import SyncReport
from core.consumers.embeddings import EmbedSync
from core.consumers.neo4j_push import Neo4jPush, push_lock
from core.consumers.team_pull import TeamPull
from core.ledger.cursors import PullCursors, PushCursorFile, VectorCursors
from core.memory.tiers.base import one_line
from core.memory.tiers.neo4j import WRITE_BATCH
from core.team.identity import HostClaimed
from core.team.refusals import Refusals

if TYPE_CHECKING:
    from core.memory.stores import Stores

# Push and pull take turns of up to this long within one sync run (see Orchestrator.run).
TURN_SECONDS = 5.0


class Orchestrator:
    """The consumers of one state directory, built on first use, and when they run."""

    def __init__(self, stores: "Stores"):
        self.stores = stores
        self._push: Neo4jPush | None = None
        self._pull: TeamPull | None = None
        self._embeddings: EmbedSync | None = None

    @property
    def push(self) -> Neo4jPush:
        if self._push is None:
            self._push = Neo4jPush(self.stores.ledger, self.stores, PushCursorFile(self.stores.state_dir))
        return self._push

    @property
    def pull(self) -> TeamPull:
        if self._pull is None:
            self._pull = TeamPull(self.stores.ledger, self.stores, PullCursors(lambda: self.stores.sqlite))
        return self._pull

    @property
    def embeddings(self) -> EmbedSync:
        if self._embeddings is None:
            self._embeddings = EmbedSync(self.stores.ledger, self.stores, VectorCursors(lambda: self.stores.vectors))
        return self._embeddings

    # -- the push's cursor and its admin steps (core/consumers/neo4j_push.py) ------
    def state(self):
        return self.push.state()

    def pending(self, offset: int | None = None) -> int:
        return self.push.pending(offset)

    def backfill(self, clear: bool = False, progress=None) -> SyncReport:
        return self.push.backfill(clear=clear, progress=progress)

    def rename(self, new_host: str) -> dict[str, Any]:
        return self.push.rename(new_host)

    # -- when they run ----------------------------------------------------------------
    def after_write(self, max_seconds: float = 60.0, retries: int = 3) -> SyncReport | None:
        """After a write (an ingest, an enrichment): push and pull now, best
        effort; None when Neo4j is not configured."""
        if self.stores.neo4j is None:
            return None
        return self.run(max_seconds=max_seconds, retries=retries)

    def run_all(self, max_seconds: float = 300.0) -> SyncReport:
        """``ars sync run``: Neo4j (when configured: push and pull in turns), then
        the embeddings (vectors.sqlite, and their copy in Neo4j's vector index).
        Works without Neo4j; ``ok`` is false when any consumer failed."""
        if self.stores.neo4j is not None:
            report = self.run(max_seconds=max_seconds)
        else:
            report = SyncReport(error="")
            report.neo4j = "not configured (set ARS_NEO4J_URI)"
        if self.stores.settings.embedder != "off":
            emb = self.embeddings.run(max_seconds=max_seconds)
            report.embeddings = emb
            if not emb.ok:
                report.ok = False
                report.error = "; ".join(e for e in (report.error, f"embeddings: {emb.error}") if e)
        return report

    def run(self, max_seconds: float = 60.0, retries: int = 3, backoff: float = 0.5,
            max_events: int = WRITE_BATCH, turn_seconds: float = TURN_SECONDS) -> SyncReport:
        """Push the ledger into Neo4j and pull the other hosts' episodes, until
        both are caught up or ``max_seconds`` passes.

        Push and pull take turns of up to ``turn_seconds`` each: a push that
        has a long backlog (a host ingesting its history) no longer holds the
        pull off until its time is up, so the other hosts' episodes keep
        arriving while this host writes (a pull used to get only what was left
        of ``max_seconds`` after the push, and under steady ingest that was
        the 5 s minimum of each run)."""
        t0 = time.monotonic()
        push = self.push
        report = SyncReport()
        if self.stores.neo4j is None:
            report.ok, report.error = False, "neo4j is not configured (set ARS_NEO4J_URI)"
            return report
        deadline = t0 + max_seconds
        wrote = False
        refused = Refusals()  # what the pull turns refused of other hosts: one line per host for the run
        # one pusher per state directory, across processes too: a host's commits
        # reach the graph in ledger order, which the other hosts' pull cursors rely on
        with push.lock, push_lock(self.stores.state_dir):
            if not push.claimed(report, retries, backoff, deadline):
                report.pending = push.pending()
                report.seconds = time.monotonic() - t0
                return report
            while True:
                report.turns += 1
                t = time.monotonic()
                try:
                    pushed, w = push.push(report, min(deadline, t + turn_seconds), deadline, retries, backoff,
                                          max_events)
                except HostClaimed as exc:  # a copy of this directory pushed meanwhile
                    push.refuse(report, str(exc))
                    break
                wrote = wrote or w
                report.push_seconds += time.monotonic() - t
                push.pull_partners(report)
                if not report.ok:
                    break
                t = time.monotonic()
                # at least one page, even when the push used up the run's time
                pulled = self.pull.run(max_seconds=max(min(turn_seconds, deadline - t), 0.0), refusals=refused)
                report.pull_seconds += time.monotonic() - t
                report.pulled += pulled.pulled
                report.pull_refused = pulled.refused  # the run's so far: its turns share ``refused``
                if not pulled.ok:
                    report.pull_error = pulled.error
                    report.ok, report.error = False, f"pull: {pulled.error}"
                    break
                if (pushed and pulled.caught_up) or time.monotonic() >= deadline:
                    break
            if wrote:
                try:
                    self.stores.neo4j.refresh_index()  # what this run synced is searchable when it returns
                except Exception as exc:  # noqa: BLE001 - committed, the index catches up by itself; but say so
                    if report.ok:
                        report.ok, report.error = False, f"index refresh: {one_line(exc)}"
        report.pending = push.pending()
        push.save(push.state(), report.pending)
        report.seconds = time.monotonic() - t0
        return report

    # -- the view for doctor, `ars sync status` and the dashboard -----------------
    def status(self) -> dict[str, Any]:
        st = self.push.state()
        counts: dict[str, int | None] = {"sqlite": None, "neo4j": None}
        errors = []
        try:
            counts["sqlite"] = self.stores.sqlite.count()
        except Exception as exc:  # noqa: BLE001
            errors.append(f"sqlite: {one_line(exc)}")
        store = self.stores.neo4j
        if store is not None:
            try:
                store.breaker.before_call()
                counts["neo4j"] = store.count()
                store.breaker.success()
            except Exception as exc:  # noqa: BLE001
                errors.append(f"neo4j: {one_line(exc)}")
        drift = None
        if counts["sqlite"] is not None and counts["neo4j"] is not None:
            # this namespace: this host's episodes and those it pulled, against the graph's
            drift = counts["sqlite"] - counts["neo4j"]
        ident = self.stores.identity
        claim_st: dict[str, Any] | None = None
        if store is not None:
            try:
                from core.team.claim import status as claim_status

                claim_st = claim_status(store, ident, self.stores.ledger, self.stores.state_dir)
            except Exception as exc:  # noqa: BLE001
                errors.append(f"claim: {one_line(exc)}")
        hosts: dict[str, Any] = {}
        try:
            hosts = self.pull.status()
        except Exception as exc:  # noqa: BLE001
            errors.append(f"pull status: {one_line(exc)}")
        pending = self.push.pending(st.offset) if store is not None else 0
        return {
            "namespace": ident.namespace,
            "host": ident.host,
            "claim": claim_st,  # this host id's claim in the graph and any conflict (None: no graph to ask)
            "push_backlog": pending,
            "hosts": hosts,  # per host of the namespace: graph and local counts; lag for the others
            "drift_by_namespace": {ident.namespace: drift},
            "pending": pending,
            "failed": st.failed,
            "counts": counts,
            "drift": drift,
            "last_error": (claim_st or {}).get("conflict") or st.last_error or ("; ".join(errors) if errors else ""),
            "last_ok": st.last_ok,
            "ledger": self.stores.ledger.check(),
        }
