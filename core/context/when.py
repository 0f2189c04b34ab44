"""When a memory happened, as an agent and a person read it: the absolute local time with
its zone, and the day relative to now ("yesterday", "2 days ago").

An agent asked "did the restart finish?" the next morning must tell yesterday's restart
from last month's; a bare ISO time in UTC made it do date arithmetic across zones. Days
are counted in local calendar days (yesterday at 23:50 is "yesterday" at 00:10).
"""

from __future__ import annotations

from datetime import datetime, timezone


def local(ts: datetime) -> datetime:
    """``ts`` in this machine's local zone (a naive time is taken as UTC, as Episode does)."""
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=timezone.utc)
    return ts.astimezone()


def relative_day(ts: datetime, now: datetime | None = None) -> str:
    """``today``, ``yesterday``, ``N days ago`` (to 6), ``N weeks ago`` (to 8), ``N months
    ago``, ``N years ago``; ``tomorrow`` / ``in N days`` for a time ahead of the clock."""
    now = local(now) if now is not None else datetime.now().astimezone()
    days = (now.date() - local(ts).date()).days
    if days == 0:
        return "today"
    if days == 1:
        return "yesterday"
    if days == -1:
        return "tomorrow"
    if days < 0:
        return f"in {-days} days"
    if days < 7:
        return f"{days} days ago"
    if days < 60:
        weeks = days // 7
        return "1 week ago" if weeks == 1 else f"{weeks} weeks ago"
    if days < 730:
        return f"{days // 30} months ago"
    return f"{days // 365} years ago"


def when_text(ts: datetime | None, now: datetime | None = None) -> str:
    """``2026-09-07 20:08 CST (yesterday)``; ``time unknown`` without a time."""
    if ts is None:
        return "time unknown"
    at = local(ts)
    zone = at.tzname() or at.strftime("%z")
    if zone and zone[0] in "+-":  # a zone without a name: UTC+08:00
        zone = f"UTC{zone[:3]}:{zone[3:]}" if len(zone) == 5 else f"UTC{zone}"
    return f"{at:%Y-%m-%d %H:%M} {zone} ({relative_day(ts, now)})"
