"""Times as the supervisor reads them: in the machine's local zone, with the zone named.

One formatter for every view and the CLI (the event log, the Request pane, the
audit, ``ars loop list``, the web page), so one moment reads the same
everywhere: ``2026-12-05 20:08:03 CET``. A zone whose name is not a word
(``+08``) is written as its offset (``UTC+08:00``). Stdlib only.
"""

from __future__ import annotations

from datetime import datetime, timezone


def local_zone(dt: datetime | None = None) -> str:
    """The local zone's name at ``dt`` (now when None): ``CET``, ``UTC``, else ``UTC+08:00``."""
    t = (dt or datetime.now(timezone.utc)).astimezone()
    name = t.tzname() or ""
    if name.isalpha():
        return name
    off = t.strftime("%z")
    return "UTC" if off in ("", "+0000") else f"UTC{off[:3]}:{off[3:]}"


def local_time(dt: datetime, *, seconds: bool = True, date: bool = True) -> str:
    """``2026-12-05 20:08:03 CET`` (``seconds=False``: ``20:08``; ``date=False``: the time alone)."""
    if dt.tzinfo is None:  # naive times ARS writes are UTC
        dt = dt.replace(tzinfo=timezone.utc)
    t = dt.astimezone()
    fmt = ("%Y-%m-%d " if date else "") + ("%H:%M:%S" if seconds else "%H:%M")
    return f"{t.strftime(fmt)} {local_zone(dt)}"


def local_short(dt: datetime, now: datetime | None = None, *, with_zone: bool = True) -> str:
    """A compact local time for a table cell: ``20:07 CET`` today, ``12-04 20:07 CET`` before
    (``with_zone=False``: the zone goes in the column's header instead)."""
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    t = dt.astimezone()
    today = (now or datetime.now(timezone.utc)).astimezone().date()
    fmt = "%H:%M" if t.date() == today else "%m-%d %H:%M" if t.year == today.year else "%Y-%m-%d"
    return f"{t.strftime(fmt)} {local_zone(dt)}" if with_zone else t.strftime(fmt)
