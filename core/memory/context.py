"""Session context: what an episode's neighbours say, as a second index field.

An episode's neighbours are the episodes next to it in the same session, in
time order (the ``FOLLOWED_BY`` chain): up to ``CONTEXT_NEIGHBOURS`` either
side. Their index terms go into a second, down-weighted field of every index
tier (SQLite's FTS ``context`` column, Neo4j's ``context`` property), because
a question often names what the turns around the answer talk about ("when did
Caroline go to the support group?" is answered by "Yesterday, it was great").
On LoCoMo dev, +-2 was best (+-1 and +-3 lower); episodes without a session
have no context.

The field is bounded: a neighbour gives at most ``CONTEXT_TERMS`` terms (the
end of the one before, the start of the one after: the parts next to the
episode), so long transcript episodes do not multiply the index size (FTS
inserts are most of the cost of durable ingest). 50 holds a whole LoCoMo turn
(median 32 words, p95 59) and scored the same as 200 on LoCoMo dev (SQLite
R@10 80.0 vs 79.9, 95 % CI -0.5 to +0.6).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Sequence

CONTEXT_NEIGHBOURS = 2
CONTEXT_TERMS = 50
# The episode just before counts this many times in the field: an episode is most often
# the reply to it ("It was one of those moments where I felt tiny" answers "what was the
# meteor shower like?"), so what it answers says more of what it is about than what came
# after it or two turns away. LoCoMo dev (bench/recall_quality.py, paired over the same
# 997 questions): SQLite R@10 80.1 -> 81.1 (ahead in 5 of 5 conversations), fused 80.1 ->
# 81.4 (95 % CI +0.4 to +2.2; R@3 62.3 -> 64.3, R@5 72.1 -> 73.1); 3 was no better (fused
# 81.2), nor was the replied-to turn counting twice in the dense tier's context vector too
# (fused +0.1), nor dropping the second turn after.
REPLIED_TO_WEIGHT = 2


def order_key(first_ts: datetime | str | None, last_ts: datetime | str | None = None) -> float:
    """An episode's place in its session: its start (else its end) in epoch
    seconds, 0 when it has neither (then arrival order decides)."""
    value = first_ts or last_ts
    if not value:
        return 0.0
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return 0.0
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)  # as Episode does with naive times
    return value.timestamp()


def context_of(before: Sequence[str], after: Sequence[str]) -> str:
    """The context field of an episode from its neighbours' index terms
    (space-separated strings; ``before`` in time order, nearest last)."""
    parts = []
    for i, terms in enumerate(before):
        words = " ".join(terms.split()[-CONTEXT_TERMS:])
        parts.extend([words] * (REPLIED_TO_WEIGHT if i == len(before) - 1 else 1))
    for terms in after:
        words = terms.split()
        parts.append(" ".join(words[:CONTEXT_TERMS]))
    return " ".join(p for p in parts if p)
