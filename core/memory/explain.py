"""``explain``: why recall did or did not return an episode for a query.

A part of ``Memory`` (core/memory/memory.py): it runs the recall, then asks
each tier where the episode stands (stored? matched? ranked where?) and says
which of those cut it.
"""

from __future__ import annotations

import time
from typing import Sequence

from core.memory.query import parse_tiers, prepare_query
from core.memory.recall import FAILED
from core.memory.scoring import Query
from core.memory.text import index_terms, term_of
from core.memory.tiers.base import Lookup, one_line
from core.models import TIER_NAMES, Explanation, TierExplanation, TierReport

EXPLAIN_DEADLINE = 10.0


class Explain:
    """``explain`` and its per-tier verdicts (a part of ``Memory``)."""

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
