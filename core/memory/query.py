"""A recall's query: checked, capped and tokenised once, shared by every tier."""

from __future__ import annotations

from datetime import datetime
from typing import Sequence

from core.errors import BadQuery
from core.memory.scoring import Query
from core.memory.text import query_terms, tokenize
from core.memory.time_window import windows
from core.models import TIER_NAMES

MAX_QUERY_CHARS = 4000
MAX_QUERY_TOKENS = 200


def parse_tiers(tiers: str | Sequence[str] | None) -> list[str] | None:
    if tiers is None:
        return None
    names = [t.strip().lower() for t in (tiers.split(",") if isinstance(tiers, str) else tiers) if t.strip()]
    unknown = [t for t in names if t not in TIER_NAMES]
    if unknown or not names:
        raise BadQuery(
            f"unknown tier {', '.join(repr(t) for t in unknown) or '(none given)'}: "
            f"choose from {', '.join(TIER_NAMES)}, comma-separated"
        )
    return list(dict.fromkeys(names))


def prepare_query(text: str, now: datetime | None = None, asks: str | None = None) -> Query:
    """The query every tier shares. What a query can cost is capped: its
    first ``MAX_QUERY_CHARS`` characters and first ``MAX_QUERY_TOKENS``
    distinct tokens are searched (an agent may pass a whole prompt; a 1 MB
    query took 24 s and ignored every deadline).

    With ``now`` (when it is asked), the times it names ("前天", "last week")
    become windows (core/memory/time_window.py): matched against when a memory
    happened. The words stay searched too: a turn often says "last year" itself
    (on LoCoMo and MADial dev, dropping them was no better)."""
    if not isinstance(text, str) or not text.strip():
        raise BadQuery("empty query: give some words to search for, e.g. ars recall \"neo4j outage\"")
    text = text[:MAX_QUERY_CHARS]
    # a query of several lines (a dialogue, a prompt after what came before) asks in its last
    # line, unless the caller says which part asks (a turn: its prompt, before the reply quoted):
    # a "today" or "yesterday" elsewhere was said at its own moment
    if asks is None:
        asks = next((line for line in reversed(text.splitlines()) if line.strip()), text)
    found = windows(asks, now) if now is not None else []
    tokens = tokenize(text, query=True)[:MAX_QUERY_TOKENS]
    if not tokens:
        raise BadQuery(f"query {text.strip()[:40]!r} has no searchable words: use letters, digits or CJK characters")
    q = Query.prepare(text, tokens, query_terms(tokens))
    q.windows = found
    return q
