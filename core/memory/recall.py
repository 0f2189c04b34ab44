"""Unified recall over the tiers: fan-out with a deadline per tier, then fusion.

Fan-out: the index tiers (Neo4j, SQLite, dense) run in parallel, each on its
own pool with its own deadline; recall never waits longer than a tier's
deadline for it. The raw file scan is the fallback: it runs when no index
tier answered (or when asked for by name), because it is the slowest and
always there. Answers are fused by score (``scoring.fuse``: each tier's scores
normalised, weighted, summed), duplicates collapsed; ``degraded`` says a tier
that should have answered did not.

``Recall`` is the part of ``Memory`` (core/memory/memory.py) that answers;
it uses the tiers, pools, deadlines and breaker ``Memory`` sets up.
"""

from __future__ import annotations

import time
from datetime import datetime
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Sequence

from core.errors import BadQuery
from core.govern.tombstone import load as forgotten_set
from core.memory import scoring
from core.memory.query import parse_tiers, prepare_query
from core.memory.scoring import Query, fuse
from core.memory.tiers.base import DENSE_OFF, Tier, one_line
from core.models import TIER_NAMES, RecallResult, TierReport
from core.team.scope import OVERFETCH, Scope, keep_in_scope, parse_scope

ANSWERED = ("ok", "empty")
FAILED = ("down", "timeout", "error")
# A tier's one-time set-up (it opens files, loads a model, creates a driver: no network), at
# least this long, and PREPARE_PER_DEADLINE times the tier's own deadline: who gives a tier
# 10 s to answer gives its set-up longer too (a model load on a machine four times
# oversubscribed took over 10 s, and the tier then sat out the whole query)
PREPARE_TIMEOUT = 10.0
PREPARE_PER_DEADLINE = 4.0
# Why Neo4j stands by (ARS_NEO4J_RECALL=standby, the default): its full-text index
# holds the same words of the same episodes as SQLite's (it answers only what this
# host's SQLite vouches for), so asking both is one lexical vote paid twice. At a
# million episodes on two cores its JVM took the CPU the other tiers needed: fused
# recall p95 80-85 ms asking it, 44-47 not, in one process. Fusion gives SQLite both tiers' weight
# (scoring.SAME_WORDS), which measured within noise of the three-tier fusion on
# LoCoMo and MADial dev. Neo4j answers whenever SQLite does not, and when asked
# by name; ARS_NEO4J_RECALL=always asks both every time.
STANDBY = "standby: SQLite answered with the same words (ARS_NEO4J_RECALL=always asks both)"


def _not_configured(tier: str) -> TierReport:
    """The report of a tier this state does not have."""
    if tier == "dense":
        return TierReport(tier=tier, status="skipped", skip_reason="off", error=DENSE_OFF)
    return TierReport(tier=tier, status="skipped", skip_reason="not configured",
                      error="not configured (set ARS_NEO4J_URI)")


class Recall:
    """Fan-out, fusion and tier health (a part of ``Memory``)."""

    def tier(self, name: str) -> Tier | None:
        if name == "sqlite":
            return self.sqlite
        if name == "neo4j":
            return self.neo4j
        if name == "dense":
            return self.dense
        return self.files

    # -- recall -----------------------------------------------------------------
    def recall(self, query: str, k: int = 10, tiers: str | Sequence[str] | None = None,
               scope: "str | Scope | None" = None, now: datetime | None = None,
               asks: str | None = None) -> RecallResult:
        """``now``: when it is asked (default: this moment, in this machine's zone), for the
        times the query names ("yesterday", "上周"); ``asks``: the part of the query whose
        times count (default: its last line)."""
        if k < 1:
            raise BadQuery(f"k must be at least 1, got {k}")
        t0 = time.perf_counter()
        q = prepare_query(query, now or datetime.now().astimezone(), asks)
        wanted = parse_tiers(tiers)
        q.scope = parse_scope(scope)
        depth = max(k, scoring.FUSION_DEPTH)  # the order must not depend on k
        ask = depth * OVERFETCH if q.scope else depth  # post-filtered tiers need more candidates
        reports: dict[str, TierReport] = {}
        standby = wanted is None and self.neo4j_stands_by()
        primary = wanted or [*([] if standby else ["neo4j"]), "sqlite",
                             *(["dense"] if self.dense_in_default() else [])]
        self.prepare(primary if wanted else [*primary, "files"])
        start = time.monotonic()  # the tiers' clocks start once their set-up is done
        reports.update(self._fan_out(q, ask, primary, start))
        if standby:
            if reports["sqlite"].status in ANSWERED:
                reports["neo4j"] = TierReport(tier="neo4j", status="skipped", skip_reason="standby", error=STANDBY)
            else:
                # Neo4j holds the same words: it answers in SQLite's place, on its own
                # deadline from now (a fallback, as the raw files are; so are they, below)
                start = time.monotonic()
                self.prepare(["neo4j"])
                reports.update(self._fan_out(q, ask, ["neo4j"], start))
        if wanted is None:
            if any(r.status in ANSWERED for r in reports.values()):
                reports["files"] = TierReport(tier="files", status="skipped", skip_reason="fallback only",
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
        if q.windows:  # whether a hit is in a time the query names: its time, before fusing (dense has none)
            self._timed([h for r in ordered for h in r.hits])
        hits = fuse({r.tier: r.hits for r in ordered if r.hits}, k, windows=q.windows)
        for r in ordered:  # each tier's report shows its own top k
            del r.hits[k:]
        for h in hits:  # where each memory came from (--json, the dashboard)
            h.origin = next((t.origin for t in h.per_tier.values() if t.origin), None) or origins.get(h.episode_id, {})
        self._timed(hits)
        degraded = any(r.status in FAILED for r in ordered)
        return RecallResult(query=q.text, tokens=q.tokens, k=k, tiers=ordered, hits=hits,
                            degraded=degraded, latency_ms=(time.perf_counter() - t0) * 1000,
                            times=[w.label() for w in q.windows])

    def neo4j_stands_by(self) -> bool:
        """Whether a recall without --tiers leaves Neo4j out while SQLite answers
        (``ARS_NEO4J_RECALL``, ``STANDBY``)."""
        return self.settings.neo4j_recall == "standby" and bool(self.settings.neo4j_uri)

    def _timed(self, hits) -> None:
        """When each hit happened, from SQLite for those whose tiers did not say (dense)."""
        missing = [h.episode_id for h in hits if h.ts is None]
        if not missing:
            return
        try:
            times = self.sqlite.times(missing)
        except Exception:  # noqa: BLE001 - a time is a label; recall answers without it
            return
        for h in hits:
            if h.ts is None and h.episode_id in times:
                try:
                    h.ts = datetime.fromisoformat(times[h.episode_id])
                except ValueError:
                    pass

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
            if name == "neo4j" and self.stores.neo4j_opened() is None and self.settings.neo4j_uri:
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
                out[name] = _not_configured(name)
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
                if name == "neo4j" and self.stores.neo4j_opened() is not None:
                    self.stores.neo4j_opened().breaker.failure(msg, hard=False)
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
                out.append(_not_configured(name))
            else:
                out.append(tier.health())
        return out

