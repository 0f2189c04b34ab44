"""Status colours from the theme's semantic variables, ages, short forms.

DataTable cells are Rich text, which does not know Textual's ``$variables``;
``theme_style`` reads them from the running app so every theme works, and the
views redraw their status cells when the theme changes.
"""

from __future__ import annotations

import re
import sys
from datetime import datetime, timezone
from functools import lru_cache

from rich.style import Style
from rich.text import Text
from textual.app import App
from textual.color import Color

# status -> (theme variable, bold)
STATUS_VAR: dict[str, tuple[str, bool]] = {
    "initialized": ("foreground-darken-3", False),
    "active": ("text-primary", True),
    "waiting_human": ("text-warning", True),
    "blocked": ("text-error", True),
    "done": ("text-success", False),
    "aborted": ("text-error", False),
    "paused": ("text-muted", False),  # active on disk, but no process runs it (R resumes it)
}
TIER_VAR: dict[str, tuple[str, bool]] = {
    "ok": ("text-success", False),
    "empty": ("text-warning", False),
    "skipped": ("foreground-darken-3", False),
    "down": ("text-error", True),
    "timeout": ("text-error", True),
    "error": ("text-error", True),
}
OUTCOME_VAR = {"pass": "text-success", "fail": "text-error", "unknown": "text-warning"}
STATUS_MARK = {"initialized": "○", "active": "●", "waiting_human": "?", "blocked": "■", "done": "✓",
               "aborted": "✗", "paused": "◌"}


def theme_style(app: App, var: str, bold: bool = False) -> Style:
    return _style_of(app.theme_variables.get(var, ""), bold)


@lru_cache(maxsize=256)
def _style_of(raw: str, bold: bool) -> Style:
    """The style for a theme colour's value (Styles are immutable: one per value is
    shared by every cell; parsing the colour per cell was a third of building 1,000 rows)."""
    try:
        color = Color.parse(raw).rich_color if raw else None
    except Exception:  # noqa: BLE001 - a theme without the variable: plain text
        color = None
    return Style(color=color, bold=bold)


def status_text(app: App, status: str, label: str | None = None) -> Text:
    var, bold = STATUS_VAR.get(status, ("foreground", False))
    return Text(f"{STATUS_MARK.get(status, ' ')} {label or status}", style=theme_style(app, var, bold))


def tier_text(app: App, status: str) -> Text:
    var, bold = TIER_VAR.get(status, ("foreground", False))
    return Text(status, style=theme_style(app, var, bold))


def outcome_text(app: App, outcome: str) -> Text:
    return Text(outcome, style=theme_style(app, OUTCOME_VAR.get(outcome, "foreground")))


# Snapshot tests set this: ages, clock times and latencies then print as fixed
# placeholders, so a picture of the dashboard does not change with the clock.
STILL = False


def clock() -> datetime:
    """Now, for relative times (tests move it forward to see ages redraw)."""
    return datetime.now(timezone.utc)


def age(ts: datetime | None, now: datetime | None = None) -> str:
    """``42s``, ``7m``, ``3h``, ``5d``."""
    if ts is None:
        return "-"
    if STILL:
        return "1m"
    now = now or clock()
    secs = max(0, int((now - ts).total_seconds()))
    if secs < 60:
        text = f"{secs}s"
    elif secs < 3600:
        text = f"{secs // 60}m"
    elif secs < 86400:
        text = f"{secs // 3600}h"
    else:
        text = f"{secs // 86400}d"
    # one object per text: a table cell that shows the same age is the same object, so its
    # render is reused (KeyedTable keeps renders by cell object)
    return sys.intern(text)


def one_line(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def stamp(ts: datetime) -> str:
    """The supervisor's local time with its zone (core/infra/local_time.py), as every view and the CLI."""
    from core.api import local_time

    return "2026-03-20 09:00:00 UTC" if STILL else local_time(ts)


_LOCAL = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} (?:UTC[+-]\d{2}:\d{2}|[A-Za-z]+)")


def still_local(text: str) -> str:
    """Local times inside a text (core's ``local_time``), fixed when ``STILL`` (snapshot tests)."""
    return _LOCAL.sub("2026-03-20 09:00:00 UTC", text) if STILL else text


def ms(value: float) -> str:
    return "n ms" if STILL else f"{value:.0f} ms"


_ISO = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?")


def still(text: str) -> str:
    """Clock times inside a value, fixed when ``STILL`` (snapshot tests)."""
    return _ISO.sub("2026-03-20T09:00:00Z", text) if STILL else text


def short_ids(ids: list[str], width: int, strip: str = "") -> dict[str, str]:
    """Each id as a person can tell it apart in ``width`` columns: whole when
    it fits, else its head and its tail around an ellipsis, lengthened until
    no two ids of ``ids`` look the same. ``strip`` (e.g. ``"loop-"``) is a
    prefix every id shares and that says nothing. Ids that differ only at
    the end (``loop:loop-677b…:1`` and ``:2``) keep that end."""
    bare = {i: (i[len(strip):] if strip and i.startswith(strip) else i) for i in ids}
    out: dict[str, str] = {}
    if all(len(b) <= width for b in bare.values()):
        return dict(bare)
    # the tail: the last ``:``-separated part (a chunk number), else nothing
    for n in range(width, 200):
        out.clear()
        seen: dict[str, str] = {}
        clash = False
        for i, b in bare.items():
            if len(b) <= n:
                shown = b
            else:
                head, sep, tail = b.rpartition(":")
                tail = (sep + tail) if head and len(tail) <= 8 else ""
                keep = max(1, n - len(tail) - 1)
                shown = b[:keep] + "…" + tail
            if seen.get(shown, i) != i:
                clash = True
                break
            seen[shown] = i
            out[i] = shown
        if not clash:
            return out
    return dict(bare)


def unique_prefixes(ids: list[str], strip: str = "loop-", min_len: int = 6) -> dict[str, str]:
    """The shortest prefix (at least ``min_len``) that tells each id from every
    other one, git-style, after a shared ``strip`` prefix: ``3612e5``."""
    bare = sorted((i[len(strip):] if i.startswith(strip) else i, i) for i in ids)
    out: dict[str, str] = {}
    for n, (b, i) in enumerate(bare):
        need = min_len
        for m in (n - 1, n + 1):
            if 0 <= m < len(bare):
                other = bare[m][0]
                common = 0
                for x, y in zip(b, other):
                    if x != y:
                        break
                    common += 1
                need = max(need, common + 1)
        out[i] = b[:need]
    return out
