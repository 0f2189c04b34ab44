"""What the Checkpoints screen writes: the tree's labels (goal, loop, history entry) and
the Entry pane's text for one history entry, with the diff from the entry before it."""

from __future__ import annotations

import json

from rich.text import Text
from textual.markup import escape

from core.api import HistoryEntry, LoopState

from tui.diff import bookkeeping, diff
from tui.widgets import status
from tui.widgets.status import STATUS_MARK, STATUS_VAR, age, one_line, stamp, still, theme_style

MAX_DIFF_LINES = 60


def loop_label(app, s: LoopState) -> Text:
    var, bold = STATUS_VAR.get(s.status, ("foreground", False))
    t = Text()
    t.append(f"{STATUS_MARK.get(s.status, ' ')} {s.status:<13}", style=theme_style(app, var, bold))
    t.append(f" {s.loop_id}  it {s.iteration}/{s.budget.max_iterations}")
    if s.parent:
        t.append(f"  ⑂ fork@{s.parent.index}", style="dim")
    return t

def goal_label(app, goal_id: str, states) -> Text:
    n = sum(1 for s in states if s.goal_id == goal_id)
    waiting = sum(1 for s in states if s.goal_id == goal_id
                  and s.status in ("waiting_human", "blocked"))
    t = Text(goal_id, style="bold")
    t.append(f"  {n} loop{'s' * (n != 1)}", style="dim")
    if waiting:
        t.append(f"  {waiting} waiting", style=theme_style(app, "text-warning"))
    return t

def entry_label(app, e: HistoryEntry) -> Text:
    t = Text(f"#{e.index:<3} ", style="bold")
    if e.from_status != e.to_status:
        var, bold = STATUS_VAR.get(e.to_status, ("foreground", False))
        t.append(f"{e.from_status or '·'}→{e.to_status} ", style=theme_style(app, var, True))
    else:
        t.append(f"{e.from_step or '·'}→{e.to_step} ", style="")
    t.append(f"it{e.iteration} ", style="dim")
    t.append(one_line(e.reason, 48), style="dim" if e.kind == "step" else "")
    return t


def entry_text(e: HistoryEntry, prev: HistoryEntry | None, pos: int, total: int) -> str:
    s = e.state
    lines = [f"[b]entry #{e.index}[/] of {escape(s.loop_id)}  [dim]({pos + 1} of {total} kept · "
             f"{stamp(e.ts)} · {age(e.ts)} ago)[/]",
             f"{e.kind}: {e.from_status or '-'}/{e.from_step or '-'} → [b]{e.to_status}/{e.to_step}[/] · "
             f"iteration {e.iteration}",
             f"[b $text-accent]reason[/] {escape(one_line(e.reason, 300))}"]
    rec = e.detail.get("recall")
    if rec:
        hits = ", ".join(f"{h['episode_id']} {h['score']:.3f}" for h in rec.get("hits", [])[:5]) or "no hits"
        lines.append(f"[b $text-accent]recall[/] {escape(one_line(rec.get('query', ''), 80))}: {escape(hits)}"
                     + (" [$text-error](degraded)[/]" if rec.get("degraded") else ""))
    for key in ("action", "question", "result", "verification", "decision"):
        v = e.detail.get(key)
        if v:
            lines.append(f"[b $text-accent]{key}[/] "
                         f"{escape(still(one_line(json.dumps(v, ensure_ascii=False, default=str), 240)))}")
    failed = [c for c in e.detail.get("checks", []) if not c["result"]["passed"]]
    for c in failed:
        why = "; ".join(f"{v['title']}: {v['reason']}" for v in c["result"]["verdicts"] if v["verdict"] == "fail")
        lines.append(f"[$text-error]check failed[/] {escape(c['result']['subject'])}: {escape(one_line(why, 200))}")
    lines.append("")
    if prev is None:
        lines.append("[b]first entry kept[/] [dim](nothing before it to compare)[/]")
    else:
        before, after = prev.state.model_dump(mode="json"), s.model_dump(mode="json")
        changes = diff(before, after)
        gap = f" [dim]({e.index - prev.index - 1} entries between were dropped by retention)[/]" \
            if e.index - prev.index > 1 else ""
        kept = bookkeeping(before, after)
        lines.append(f"[b]changes since #{prev.index}[/]{gap}  [dim]{len(changes)} fields"
                     + (f" (and the bookkeeping: {', '.join(kept)})" if kept else "") + "[/]")
        for c in changes[:MAX_DIFF_LINES]:
            style = {"+": "$text-success", "-": "$text-error", "~": "$text-warning"}[c.op]
            dim = "dim " if c.bookkeeping else ""
            if status.STILL and c.bookkeeping:
                val = "…"  # clocks, offsets and durations differ from run to run
            elif c.op == "~":
                val = f"{escape(still(c.old))} → {escape(still(c.new))}"
            else:
                val = escape(still(c.new or c.old))
            if c.bookkeeping:
                val = f"[dim]{val}[/]"
            lines.append(f"  [{dim}{style}]{c.op}[/] [{dim}b]{escape(c.path)}[/]: {val}")
        if len(changes) > MAX_DIFF_LINES:
            lines.append(f"  [dim]… {len(changes) - MAX_DIFF_LINES} more[/]")
    lines.append("")
    lines.append("[dim][b]\\[[/b] older · [b]][/b] newer · [b]f[/b] fork from here · [b]R[/b] resume the loop[/]")
    return "\n".join(lines)


def goal_text(goal_id: str, loops: list[LoopState]) -> str:
    """The Entry pane for a goal: its loops, oldest first."""
    lines = [f"[b]{escape(goal_id)}[/]  [dim]{len(loops)} loops[/]"]
    if loops:
        lines.append(escape(loops[0].goal.goal))
    for s in sorted(loops, key=lambda s: s.created_at):
        lines.append(f"  {escape(s.loop_id)}  {s.status}  it {s.iteration}  "
                     f"[dim]{escape(one_line(s.exit_reason, 80))}[/]")
    return "\n".join(lines)


def loop_text(s: LoopState, kept: int) -> str:
    """The Entry pane for a loop, ``kept``: how many history entries are read."""
    return (f"[b]{escape(s.loop_id)}[/]  {s.status} · iteration {s.iteration}/{s.budget.max_iterations}"
            f" · step {s.current_step}\n{escape(s.goal.goal)}\n"
            + (f"[dim]{kept} history entries kept; [b]][/b] the first, [b]\\[[/b] the last[/]" if kept else
               "[dim]enter opens its history[/]"))
