"""The relevance floor: whether a turn gets memories at all.

Recall always answers with its best hits, and its scores are relative (the best hit of
any query fuses to about the same score, core/memory/confidence.py). A message about
nothing ARS remembers must get nothing, so the floor reads absolute signals of each hit:

``share``  the idf-weighted share of the query's terms the memory holds (rare words count
           more than common ones). A Chinese message is cut into character pairs, most of
           them across word boundaries ("我特别期待" gives 特期, 期待 ...); a pair no memory
           holds is such a cut, not a word, so it is left out of the whole (an English word
           no memory holds still counts: a name ARS never heard of is a sign the answer is
           not here);
``cos``    the dense tier's cosine of the memory with the query, when it scored it.

Two levels. The message clears the floor when one memory has a share or a cosine at the
floor (0.35 / 0.38); then the block takes recall's memories in its order, each that holds
something of the message (a share of 0.1 or a cosine of 0.2: a memory that only its
session's neighbours matched goes in only beside such a neighbour, core/context/engine.py),
as many as the budget holds: on LoCoMo a question's evidence is often not the memory that
cleared the floor but one ranked near it. When the message names a person memory knows ("what did Caroline …"), only a memory
about that person can clear it. Words naming days ("yesterday", "昨天") are not counted:
they choose a time window (core/context/query.py), they are not what the memory is about.

Chosen on LoCoMo and MADial dev (bench/delivery.py; docs/benchmarks.md has the tables).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Mapping, Sequence

from core.memory.scoring import TermString, idf_weight
from core.memory.text import is_cjk, term_of
from core.models import Hit


@dataclass(frozen=True)
class Signals:
    share: float  # idf-weighted share of the query's terms held (0..1)
    cos: float | None  # dense cosine, None when the dense tier did not score it
    about: bool = True  # about the persons the message names (True when it names none)


@dataclass(frozen=True)
class Floor:
    share: float = 0.35  # the message clears the floor on words …
    cos: float = 0.38  # … or on meaning
    memory_share: float = 0.1  # then a memory goes in when it holds this much of the message …
    memory_cos: float = 0.2  # … or is this close in meaning

    def passes(self, s: Signals) -> bool:
        """Whether this memory lets the message clear the floor."""
        return s.about and (s.share >= self.share or (s.cos is not None and s.cos >= self.cos))

    def keeps(self, s: Signals) -> bool:
        """Whether this memory goes in once the message cleared the floor."""
        return s.share >= self.memory_share or (s.cos is not None and s.cos >= self.memory_cos)


DEFAULT = Floor()


class Weights:
    """The query's terms and their weights (idf), pairs no memory holds left out."""

    def __init__(self, terms: Sequence[str], n_docs: int = 0, df: Mapping[str, int] | None = None):
        terms = [t for t in terms if t not in day_terms()]
        if df is None:  # no statistics (SQLite down): every term counts the same
            self.w = {t: 1.0 for t in terms}
        else:
            self.w = {t: idf_weight(n_docs, df.get(t, 0)) for t in terms if not (is_cjk(t) and not df.get(t, 0))}
        self.total = sum(self.w.values())

    def share(self, held) -> float:
        """The weighted share of the query's terms in ``held`` (a container of index terms)."""
        if self.total <= 0:
            return 0.0
        return min(1.0, sum(w for t, w in self.w.items() if t in held) / self.total)


_DAY_WORDS = ("yesterday today tonight tomorrow morning evening afternoon night week weeks day days ago last "
              "earlier recently 昨天 今天 前天 明天 昨晚 今晚 今早 上周 本周 这周 刚才 之前 天前")


@lru_cache(maxsize=1)
def day_terms() -> frozenset[str]:
    """The index terms of words that name days: left out of a share."""
    from core.memory.text import query_terms, tokenize

    return frozenset(query_terms(tokenize(_DAY_WORDS)))


def matched_tokens(hit: Hit) -> set[str]:
    out = set(hit.matched_tokens)
    for h in hit.per_tier.values():
        out.update(h.matched_tokens)
    return out


def cosine(hit: Hit) -> float | None:
    dense = hit.per_tier.get("dense") or (hit if hit.tier == "dense" else None)
    if dense is None:
        return None
    value = dense.breakdown.get("cosine", dense.score)
    return float(value) if isinstance(value, (int, float)) else None


def signals(hit: Hit, weights: Weights, about: bool = True, terms: str | None = None) -> Signals:
    """A hit's signals; ``terms``: the episode's stored index terms (else the tokens the tiers
    matched, which include substrings: "art" in "party")."""
    held = TermString(terms) if terms is not None else {term_of(t) for t in matched_tokens(hit)}
    return Signals(share=weights.share(held), cos=cosine(hit), about=about)


def named_persons(query: str, episodes: Iterable) -> set[str]:
    """The persons the memories know (their episodes' person entities) that ``query`` names."""
    low = query.lower()
    names: set[str] = set()
    for ep in episodes:
        if ep is None:
            continue
        for e in ep.entities:
            name = e.name.strip()
            if e.type != "person" or len(name) < 2 or name in names:
                continue
            key = name.lower()
            found = key in low if any(is_cjk(ch) for ch in key) else re.search(rf"\b{re.escape(key)}\b", low)
            if found:
                names.add(name)
    return names


def is_about(ep, named: set[str]) -> bool:
    """Whether an episode is about one of the persons named (True when none is named)."""
    if not named:
        return True
    if ep is None:
        return True  # nothing to check it against: recall's word says
    held = {e.name for e in ep.entities} | {ep.agent}
    text = ep.text.lower()
    return any(n in held or n.lower() in text for n in named)
