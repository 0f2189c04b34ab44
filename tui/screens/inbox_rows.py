"""The Inbox's rows: which requests it lists (waiting, or decided for the audit
filter), in what order (urgent first), and the cells of each row."""

from __future__ import annotations

from datetime import datetime, timezone

from rich.text import Text

from core.api import ARS, InboxRequest, LoopState, inbox_urgency

from tui.widgets.request_pane import countdown, is_open, seconds_left
from tui.widgets import status
from tui.widgets.status import age, one_line, theme_style, unique_prefixes

COLUMNS = (("id", "id", 8), ("source", "source", 18), ("kind", "kind", 9), ("risk", "risk", 6),
           ("runs", "runs / asks", None), ("age", "age", 6))
KIND_LABEL = {"approval": "approve?", "question": "question", "unblock": "blocked", "blocker": "blocked"}
RISK_VAR = {"high": "text-error", "medium": "text-warning", "low": "text-success"}
OUTCOME_VAR = {"approved": "text-success", "answered": "text-success", "rejected": "text-error",
               "expired": "text-muted", "withdrawn": "text-muted"}
FAR = datetime.max.replace(tzinfo=timezone.utc)


def urgency(key: str, r: InboxRequest) -> tuple:
    """Sort key, most urgent first (core/inbox/urgency.py: the nearest deadline, then the higher
    risk, then the oldest; those nobody can decide any more last), as every view sorts."""
    return (*inbox_urgency(r, status.clock()), key)


def decided_order(key: str, r: InboxRequest) -> tuple:
    """Newest outcome first (the audit reads back in time)."""
    at = r.decision.decided_at if r.decision is not None else r.expires_at or r.created_at
    return (-at.timestamp(), key)


def waiting_loop_request(s: LoopState) -> InboxRequest | None:
    if s.status not in ("waiting_human", "blocked"):
        return None
    r = ARS.inbox_request_of(s)
    if r is not None:
        r.meta.setdefault("goal_id", s.goal_id)
    return r


AGENT_SHORT = {"claude-code": "claude", "openclaw": "openclaw", "hermes": "hermes", "mcp": "mcp"}
SOURCE_WIDTH = 18  # the source column (11 under 100 columns: inbox.py)


def source_of(r: InboxRequest, width: int = SOURCE_WIDTH) -> str:
    """Who asks, in ``width`` columns without losing its sense: a loop's goal (nightly-ci…), an agent
    and the head of its session (claude:9a1b2c); the Request pane shows it whole."""
    if r.source == "loop":  # narrow: the goal alone (the loop's short id beside it says it is a loop)
        goal = str(r.meta.get("goal_id") or "loop")
        return _fit(goal if width < 14 else "↻ " + goal, width)
    agent, sep, session = r.source.partition(":")
    short = AGENT_SHORT.get(agent, agent)
    if not sep:
        return _fit(short, width)
    room = width - len(short) - 1
    return f"{short}:{session[:room]}" if room >= 4 else _fit(f"{short}:{session}", width)


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def when_cell(r: InboxRequest) -> Text | str:
    """The last column: a live countdown while an agent waits on a deadline, else the age."""
    if r.decision is None and r.expires_at is not None:
        left = seconds_left(r)
        text = countdown(r)
        style = "dim" if text == "gone" else "bold" if left is not None and left < 15 else ""
        return Text(text, style=style)
    return age(r.created_at)


def waiting_row(app, r: InboxRequest, short: str, busy: bool, width: int = SOURCE_WIDTH) -> tuple:
    open_ = is_open(r)
    kind_var = "text-error" if r.kind == "blocker" else "text-warning"
    if r.detail and r.kind == "approval":
        runs = Text("runs ", style="dim") + Text(one_line(r.detail, 200))
    else:
        runs = Text(one_line(r.summary, 200))
    if busy:
        runs = Text("… decision sent" + (", waiting for the loop" if r.source == "loop" else ""), style="dim")
    kind = Text(KIND_LABEL.get(r.kind, r.kind), style=theme_style(app, kind_var, bold=True)) if open_ else \
        Text("withdrawn" if r.status == "withdrawn" else "expired", style="dim")
    if not open_:
        runs.stylize("dim")
    return (short, source_of(r, width), kind,
            Text(r.risk, style=theme_style(app, RISK_VAR.get(r.risk, "foreground"), r.risk == "high")),
            runs, when_cell(r))


def decided_row(app, r: InboxRequest, short: str, width: int = SOURCE_WIDTH) -> tuple:
    d = r.decision
    by = d.decided_by.split(" (", 1)[0] if d is not None and d.decided_by else "?"
    what = one_line(r.detail or r.summary, 120)
    note = f" — {one_line(d.note, 80)}" if d is not None and d.note else ""
    runs = Text(what) + Text(f"  by {by}{note}", style="dim")
    status = r.status
    return (short, source_of(r, width),
            Text(status, style=theme_style(app, OUTCOME_VAR.get(status, "foreground"), bold=True)),
            Text(r.risk, style=theme_style(app, RISK_VAR.get(r.risk, "foreground"), r.risk == "high")),
            runs, age(d.decided_at if d is not None else r.created_at))


def shorts(items: dict[str, InboxRequest]) -> dict[str, str]:
    """Short ids for the first column: a loop's id, an agent's request id, git-style."""
    loop_rows = [k for k, r in items.items() if r.source == "loop" and not k.startswith("loop:")]
    decided_loops = [k for k, r in items.items() if k.startswith("loop:")]
    agents = unique_prefixes([k for k, r in items.items() if r.source != "loop"], strip="req-")
    out = {**unique_prefixes(loop_rows), **agents}
    for k in decided_loops:  # loop:<loop>:<request>: the loop's short id, the request after it
        loop_id, _, req = k[len("loop:"):].rpartition(":")
        out[k] = f"{loop_id.removeprefix('loop-')[:5]}:{req.removeprefix('req-')[-2:]}"
    return out
