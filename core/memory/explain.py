"""``explain``: why recall did or did not return an episode for a query.

A part of ``Memory`` (core/memory/memory.py). It runs the recall as recall runs
it (every tier's top ``depth`` hits, fused), keeps the whole fused order (recall
cuts it at k), asks each tier where the episode stands (stored? matched? its
rank?), and says what follows from those ranks, in this order:

* not stored: no tier asked holds it;
* returned at fused rank N: its fused rank N is within k;
* matched but ranked N, below the cut-off k: fusion placed it N-th, past k;
* matched but ranked N in a tier, below the ``depth`` each tier gives to fusion;
* not matched: stored, but no tier ranks it (none of the query's terms; no vector yet).

So the verdict cannot contradict the table beside it: both come from the same ranks.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Sequence

from core.memory import scoring
from core.memory.query import parse_tiers, prepare_query
from core.memory.recall import FAILED
from core.memory.scoring import Query
from core.memory.text import index_terms, strip_scaffolding, term_of
from core.memory.tiers.base import Lookup, one_line
from core.models import TIER_NAMES, Explanation, Hit, TierExplanation, TierReport

EXPLAIN_DEADLINE = 10.0
ALL = 1 << 30  # "every fused hit": fuse cuts its order at this


class Explain:
    """``explain`` and its per-tier verdicts (a part of ``Memory``)."""

    def explain(self, query: str, episode_id: str, k: int = 10,
                tiers: str | Sequence[str] | None = None, now: datetime | None = None) -> Explanation:
        """Why recall did or did not return ``episode_id`` for ``query`` (asked at ``now``:
        the same moment for the recall it explains, so a time the query names counts the same)."""
        now = now or datetime.now().astimezone()
        q = prepare_query(query, now)
        wanted = parse_tiers(tiers) or list(TIER_NAMES)
        depth = max(k, scoring.FUSION_DEPTH)
        # recall(k) asks each tier for its top ``depth`` and fuses them: asked for ``depth``, recall
        # keeps every tier's hits, and fusing them again gives the whole order (it cuts at k)
        result = self.recall(query, k=depth, tiers=tiers, now=now)
        fused = scoring.fuse({r.tier: r.hits for r in result.tiers if r.hits}, ALL, windows=q.windows)
        fused_rank = next((h.rank for h in fused if h.episode_id == episode_id), None)
        twin = next((h for h in fused if episode_id in h.copies), None)  # folded in as a near-copy
        if twin is not None:
            fused_rank = twin.rank
        text = self._episode_text(episode_id)
        matched = self._matched(q, text) if text is not None else []
        missing = [t for t in q.tokens if t not in matched]
        out = [self._explain_tier(name, q, episode_id, k, depth, result.tier(name), matched, missing)
               for name in wanted]
        verdict = verdict_of(out, fused_rank, k, depth, matched)
        if twin is not None:
            verdict += f", as a near-copy folded into {twin.episode_id} (listed with it)"
        return Explanation(query=q.text, episode_id=episode_id, tokens=q.tokens, tiers=out, fused_rank=fused_rank,
                           verdict=verdict, depth=depth)

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
        low = strip_scaffolding(text).lower()  # a role label is not a word the episode says
        return [t for t in q.tokens if (term_of(t) in terms) or (t in low)]

    def _explain_tier(self, name: str, q: Query, episode_id: str, k: int, depth: int, report: TierReport | None,
                      matched: list[str], missing: list[str]) -> TierExplanation:
        base = dict(tier=name, k=k, matched_tokens=matched, missing_tokens=missing)
        if report is None or report.status == "skipped":  # not asked: it claims nothing about the episode
            why = report.error if report is not None and report.error else ""
            return TierExplanation(status="skipped", stored=None,
                                   verdict=f"{name} skipped, not asked" + (f": {why}" if why else ""), **base)
        if report.status in FAILED and not report.hits:
            return TierExplanation(status=report.status, stored=None,
                                   verdict=f"{name} {report.status}: {report.error}", **base)
        tier = self.tier(name)
        if tier is None:
            return TierExplanation(status="skipped", stored=None, verdict=f"{name} not configured", **base)
        status = report.status
        hit: Hit | None = next((h for h in report.hits if h.episode_id == episode_id), None)
        try:
            look: Lookup = tier.lookup(q, episode_id, time.monotonic() + EXPLAIN_DEADLINE)
        except Exception as exc:  # noqa: BLE001
            if hit is None:
                return TierExplanation(status="error", stored=None,
                                       verdict=f"{name} could not be asked: {one_line(exc)}", **base)
            look = Lookup(True, hit.score, hit.rank, breakdown=hit.breakdown)
        if hit is None and not look.stored:
            return TierExplanation(status=status, stored=False, candidates=look.candidates or None,
                                   verdict=look.verdict or f"not stored in {name}", **base)
        rank = hit.rank if hit is not None else look.rank  # its place in what the tier answered recall
        score = hit.score if hit is not None else look.raw_score
        breakdown = (hit.breakdown if hit is not None else look.breakdown) or {}
        of = f" of {look.candidates}" if look.candidates and rank is not None and look.candidates >= rank else ""
        if rank is None:
            verdict = f"stored in {name}, not matched: it holds none of the query's terms"
        elif rank <= k:
            verdict = f"returned by {name} at rank {rank}{of}"
        elif rank <= depth:
            verdict = f"ranked {rank}{of} by {name}, below the cut-off k={k} (fusion still weighs its top {depth})"
        else:
            verdict = f"ranked {rank}{of} by {name}, below the {depth} it gives to fusion"
        verdict += _context_note(breakdown, score)
        return TierExplanation(status=status, stored=True, raw_score=score, rank=rank, breakdown=breakdown,
                               candidates=look.candidates or None, verdict=verdict, **base)


def verdict_of(tiers: list[TierExplanation], fused_rank: int | None, k: int, depth: int,
               matched: list[str]) -> str:
    """The one sentence that follows from the tiers' ranks and the fused rank."""
    if not any(t.stored for t in tiers):
        if all(t.stored is None for t in tiers):
            return "no tier could be asked: see each tier's status"
        return "not stored in any tier asked: ingest it first (ars ingest)"
    if fused_rank is not None and fused_rank <= k:
        return f"returned at fused rank {fused_rank} of k={k}"
    ranked = [t for t in tiers if t.rank is not None]
    by_meaning = ""
    if ranked and all(t.tier == "dense" for t in ranked):
        cos = next((t.raw_score for t in ranked), None)
        by_meaning = ("; only the dense tier ranks it, by meaning" + (f" (cosine {cos:.3f})" if cos is not None else "")
                      + (": it shares no query word" if not matched else ""))
    if fused_rank is not None:
        # recall(k) for any k up to ``depth`` is the first k of one order; past it the tiers are asked
        # for more, and the order moves
        reach = f"-k {fused_rank} shows it" if fused_rank <= depth else f"past the {depth} every recall fuses alike"
        return f"matched but ranked {fused_rank} after fusion, below the cut-off k={k}: {reach}{by_meaning}"
    if ranked:
        best = min(ranked, key=lambda t: t.rank or 0)
        of = f" of {best.candidates}" if best.candidates else ""
        return (f"matched but ranked {best.rank}{of} by {best.tier}, below the {depth} each tier gives to "
                f"fusion: not a candidate{by_meaning}")
    dense = next((t for t in tiers if t.tier == "dense"), None)
    if dense is not None and "not embedded yet" in dense.verdict:
        return ("not matched: stored, but it shares no query word and is not embedded yet "
                "(`ars sync run` lets the dense tier find it by meaning)")
    return "not matched: stored, but it shares no query word (try the episode's own terms)"


def _context_note(breakdown: dict[str, float], score: float | None) -> str:
    """What the session context did for a tier's score, as part of a verdict."""
    ctx = breakdown.get("context", 0.0)
    if ctx <= 0 or not score:
        return ""
    own = sum(v for name, v in breakdown.items() if name in ("bm25", "lucene", "scan"))
    how = "only through" if own <= 1e-6 else "partly through"
    return (f"; matched {how} its session context (neighbouring episodes' words): "
            f"context {ctx:.3g} of score {score:.3g}")
