"""The relevance floor: which recalled memories are worth a turn's prompt.

Recall always answers with its best hits, and its scores are relative (the best hit of
any query fuses to about the same score, core/memory/confidence.py). A turn must get
nothing when nothing in memory is about the message, so the floor reads absolute signals
of each hit:

``share``  the idf-weighted share of the query's terms the memory holds (the lexical
           tiers' ``token_match`` component, 0..1): rare words count more than common ones;
``cos``    the dense tier's cosine of the memory with the query, when it scored it.

A memory passes when either is strong, or both are fair. The thresholds were chosen on
LoCoMo and MADial dev (bench/delivery.py; docs/benchmarks.md has the tables).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.memory.scoring import TOKEN_MATCH_WEIGHT
from core.models import Hit

LEXICAL = ("sqlite", "neo4j", "files")


@dataclass(frozen=True)
class Signals:
    share: float  # idf-weighted share of the query's terms held (0..1)
    cos: float | None  # dense cosine, None when the dense tier did not score it
    tiers: int  # how many tiers returned it


@dataclass(frozen=True)
class Floor:
    share: float = 0.5  # passes on words alone
    cos: float = 0.6  # passes on meaning alone
    share_with_cos: float = 0.3  # passes when both are at least fair …
    cos_with_share: float = 0.45  # … this and that

    def passes(self, s: Signals) -> bool:
        if s.share >= self.share:
            return True
        if s.cos is None:
            return False
        return s.cos >= self.cos or (s.share >= self.share_with_cos and s.cos >= self.cos_with_share)


DEFAULT = Floor()


def signals(hit: Hit) -> Signals:
    share = 0.0
    for name in LEXICAL:
        h = hit.per_tier.get(name) or (hit if hit.tier == name else None)
        if h is not None:
            share = max(share, h.breakdown.get("token_match", 0.0) / TOKEN_MATCH_WEIGHT)
    dense = hit.per_tier.get("dense") or (hit if hit.tier == "dense" else None)
    cos = None
    if dense is not None:
        value = dense.breakdown.get("cosine", dense.score)
        cos = float(value) if isinstance(value, (int, float)) else None
    return Signals(share=min(1.0, share), cos=cos, tiers=max(1, len(hit.per_tier)))
