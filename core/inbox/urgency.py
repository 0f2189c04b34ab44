"""Which request comes first: the order every view lists them in and ``n`` walks.

The nearest deadline first (an agent held on a clock gives up when it runs
out; a request without one waits as long as it takes), then the higher risk,
then the oldest; a request nobody can decide any more (decided, expired,
withdrawn) after every open one. The dashboard's Inbox, its ``n`` (from any
view) and the web page sort by this one key."""

from __future__ import annotations

from datetime import datetime, timezone

RISK_RANK = {"high": 0, "medium": 1, "low": 2}
FAR = datetime.max.replace(tzinfo=timezone.utc)


def is_open(r, now: datetime | None = None) -> bool:
    """Can a person still decide it (pending, its waiter not gone)?"""
    return r.decision is None and r.status == "pending" and not r.expired(now)


def urgency(r, now: datetime | None = None) -> tuple:
    """Sort key, most urgent first."""
    return (not is_open(r, now), r.expires_at or FAR, RISK_RANK.get(r.risk, 1), r.created_at, r.id)
