"""What the Inbox's Request pane says about one request: who asks, what runs,
its deadline (a live countdown while its agent waits), the keys it takes, and
for a decided one the audit line (outcome, who, when, the note). The agent's
last turns and related memories are appended by the view when they arrive
(``context_markup``: read in a thread worker, never here)."""

from __future__ import annotations

import json
from datetime import datetime

from textual.markup import escape

from core.api import InboxRequest, LoopState

from tui.widgets import status
from tui.widgets.status import age, one_line, stamp

HEAD = {"approval": "[b $text-warning]Approval needed[/]", "question": "[b $text-warning]Question[/]",
        "blocker": "[b $text-error]Blocked[/]"}
DECIDED_HEAD = {"approval": "[b]Approval request[/]", "question": "[b]Question[/]", "blocker": "[b]Blocker[/]"}
KEYS = {"approve": "[b]a[/] approve (optional note)", "reject": "[b]r[/] reject (reason)",
        "edit": "[b]e[/] edit args", "respond": "[b]enter[/] respond"}
OUTCOME_STYLE = {"approved": "b $text-success", "rejected": "b $text-error", "answered": "b $text-success",
                 "expired": "b $text-muted", "withdrawn": "b $text-muted"}
META_SKIPPED = ("transcript_path",)  # shown as the agent's last turns instead


def seconds_left(r: InboxRequest, now: datetime | None = None) -> float | None:
    """Seconds until the request's waiter gives up (None: nobody waits on a deadline)."""
    if r.expires_at is None:
        return None
    if status.STILL and not r.expired(status.clock()):
        return 50.0  # snapshots: a countdown that does not move
    return (r.expires_at - (now or status.clock())).total_seconds()


def countdown(r: InboxRequest, now: datetime | None = None) -> str:
    """``⏳42s`` / ``⏳3m`` while its agent waits, ``gone`` once the deadline passed, '' without one."""
    left = seconds_left(r, now)
    if left is None:
        return ""
    if left <= 0:
        return "gone"
    secs = int(left + 0.999)
    return f"⏳{secs}s" if secs < 100 else f"⏳{secs // 60}m" if secs < 6000 else f"⏳{secs // 3600}h"


def is_open(r: InboxRequest) -> bool:
    """Can a person still decide it (pending, its waiter not gone)?"""
    return r.decision is None and r.status == "pending" and not r.expired(status.clock())


def request_markup(r: InboxRequest, s: LoopState | None, allowed: tuple[str, ...], busy: bool) -> str:
    out: list[str] = []
    risk = "[b $text-error]high[/]" if r.risk == "high" else escape(r.risk)
    if s is not None:
        out += [f"[b]{escape(s.goal.name or s.goal_id)}[/]  [dim]{escape(s.loop_id)} · iteration "
                f"{s.iteration}/{s.budget.max_iterations} · step {s.current_step}[/]",
                f"[dim]goal:[/] {escape(one_line(s.goal.goal, 300))}", ""]
    else:
        out += [f"[b]{escape(r.source)}[/]  [dim]{escape(r.id)}[/]", ""]
    head = HEAD[r.kind] if r.decision is None else DECIDED_HEAD[r.kind]
    out.append(f"{head}  [dim]risk[/] {risk}  [dim]· asked {stamp(r.created_at)} ({age(r.created_at)} ago) · "
               f"{escape(str(r.meta.get('request_id', r.id)))}[/]")
    out.extend(_deadline(r))
    out.append(escape(r.summary))
    p = s.pending_approval if s is not None and r.decision is None else None
    if p is not None and p.action is not None:
        out += ["", f"[b]runs:[/] {escape(r.detail or p.action.tool)}",
                f"[dim]{escape(p.action.tool)} — {escape(p.action.description)}[/]"]
        if p.action.rationale:
            out.append(f"[dim]why: {escape(one_line(p.action.rationale, 240))}[/]")
        if p.risk:
            out.append(f"[$text-warning]risk: {escape(p.risk)}[/]")
    elif r.detail:
        out += ["", f"[b]runs:[/] {escape(r.detail[:2000])}"]
    if s is None:
        for k, v in r.meta.items():
            if k in META_SKIPPED:
                continue
            text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
            out.append(f"[dim]{escape(k)}: {escape(one_line(text, 200))}[/]")
    if r.decision is None and not is_open(r):
        out += ["", "[b $text-muted]expired: its agent stopped waiting; it cannot be decided any more[/]"]
    elif allowed:
        out += ["", "keys: " + " · ".join(KEYS[k] for k in allowed if k in KEYS) + " · [b]n[/] next"]
    if s is not None and s.blockers and r.decision is None:
        out += ["", "[b $text-error]blockers[/]"]
        out.extend(f"  ■ {escape(one_line(b, 200))}" for b in s.blockers)
    if busy:
        out += ["", "[$text-primary]decision sent; the loop is resuming…[/]"]
    return "\n".join(out)


def _deadline(r: InboxRequest) -> list[str]:
    if r.expires_at is None or r.decision is not None:
        return []
    left = seconds_left(r)
    if left is not None and left > 0:
        return [f"[b $text-warning]its agent waits {int(left + 0.999)} s more[/] [dim](gives up at "
                f"{stamp(r.expires_at)})[/]"]
    return [f"[b $text-muted]its agent gave up at {stamp(r.expires_at)}[/]"]


AUDIT_STYLE = {"verified": "$text-success", "invalid": "b $text-error", "unsigned": "$text-warning",
               "unchecked": "$text-warning"}


def audit_markup(rec) -> str:
    """A request's audit record (core/inbox/audit_text.py): the lines ``ars inbox show`` prints."""
    from core.api import audit_lines

    out = []
    for label, text in audit_lines(rec):
        text = status.still_local(str(text))
        body = escape(str(text)) if label in ("runs", "output") else escape(one_line(str(text), 2000))
        if label == "outcome":
            body = f"[{OUTCOME_STYLE.get(rec.request.status, 'b')}]{body}[/]"
        elif label == "signature" and rec.signature in AUDIT_STYLE:
            body = f"[{AUDIT_STYLE[rec.signature]}]{body}[/]"
        elif label == "risk" and rec.request.risk == "high":
            body = f"[b $text-error]{body}[/]"
        out.append(f"[b]{label}:[/] {body}")
    return "\n".join(out)


def context_markup(turns: list[str], memories: list[str], loop: bool = False) -> str:
    """The agent's last turns (a loop's last steps) and what ARS remembers that is related
    (one line each), after a blank line."""
    out: list[str] = [""]
    if turns:
        out += ["", "[b]before asking[/] [dim](" + ("the loop's last steps" if loop else "the agent's last turns")
                + ")[/]"]
        out.extend(f"  [dim]›[/] {escape(one_line(t, 300))}" for t in turns)
    if memories:
        out += ["", "[b]related memories[/]"]
        out.extend(f"  [dim]·[/] {escape(one_line(m, 300))}" for m in memories)
    return "\n".join(out)


def clock_line(r: InboxRequest) -> str:
    """Risk and time left (markup), so a person deciding sees the agent's clock run (the
    confirm dialog and the passphrase prompt)."""
    left = seconds_left(r)
    secs = None if left is None else int(left + 0.999)
    when = ("no deadline" if secs is None else
            "its agent has stopped waiting: nothing written now counts" if secs <= 0 else
            f"⏳{secs // 60}:{secs % 60:02d} left before its agent gives up")
    style = "$error" if r.risk == "high" else "$warning" if r.risk == "medium" else "$text-muted"
    return f"[b {style}]risk {escape(r.risk)}[/] · {escape(when)}"
