"""Status colours from the theme's semantic variables, ages, short forms.

DataTable cells are Rich text, which does not know Textual's ``$variables``;
``theme_style`` reads them from the running app so every theme works, and the
views redraw their status cells when the theme changes.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

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
    "aborted": ("error", False),
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
               "aborted": "✗"}


def theme_style(app: App, var: str, bold: bool = False) -> Style:
    raw = app.theme_variables.get(var, "")
    try:
        color = Color.parse(raw).rich_color if raw else None
    except Exception:  # noqa: BLE001 - a theme without the variable: plain text
        color = None
    return Style(color=color, bold=bold)


def status_text(app: App, status: str) -> Text:
    var, bold = STATUS_VAR.get(status, ("foreground", False))
    return Text(f"{STATUS_MARK.get(status, ' ')} {status}", style=theme_style(app, var, bold))


def tier_text(app: App, status: str) -> Text:
    var, bold = TIER_VAR.get(status, ("foreground", False))
    return Text(status, style=theme_style(app, var, bold))


def outcome_text(app: App, outcome: str) -> Text:
    return Text(outcome, style=theme_style(app, OUTCOME_VAR.get(outcome, "foreground")))


# Snapshot tests set this: ages, clock times and latencies then print as fixed
# placeholders, so a picture of the dashboard does not change with the clock.
STILL = False


def age(ts: datetime | None, now: datetime | None = None) -> str:
    """``42s``, ``7m``, ``3h``, ``5d``."""
    if ts is None:
        return "-"
    if STILL:
        return "1m"
    now = now or datetime.now(timezone.utc)
    secs = max(0, int((now - ts).total_seconds()))
    if secs < 60:
        return f"{secs}s"
    if secs < 3600:
        return f"{secs // 60}m"
    if secs < 86400:
        return f"{secs // 3600}h"
    return f"{secs // 86400}d"


def one_line(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def stamp(ts: datetime) -> str:
    return "2026-03-20 09:00:00" if STILL else f"{ts:%Y-%m-%d %H:%M:%S}"


def ms(value: float) -> str:
    return "n ms" if STILL else f"{value:.0f} ms"


_ISO = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?")


def still(text: str) -> str:
    """Clock times inside a value, fixed when ``STILL`` (snapshot tests)."""
    return _ISO.sub("2026-03-20T09:00:00Z", text) if STILL else text
