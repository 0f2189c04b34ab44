"""``ars inbox``: every request for a person (agents' and loops'), decided exactly once.

Exit codes: 0 done; 2 bad input (an unknown id, an unknown verdict, a rejection
without a reason); 1 a failure: a second decision (the line says who decided
what and when), a busy loop, a file that cannot be read.
"""

from __future__ import annotations

import shlex

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape as _esc

from tui.cli.common import JsonTextOpt as JsonOpt
from tui.cli.common import StateOpt, call, fail, open_ars, out, warn
from tui.cli.supervisor import PassFdOpt, signer_for  # one --passphrase-fd for every deciding command

inbox_app = typer.Typer(no_args_is_help=True,
                        help="Every request for a person: loops' steps and blockers, agents' approvals "
                             "(MCP, Claude Code); each decided exactly once.")

IdArg = Annotated[str, typer.Argument(help="the request id: req-<12 hex> or loop:<loop>:<request> (ars inbox list)")]

STATUS_STYLE = {"pending": "yellow bold", "approved": "green", "rejected": "red", "answered": "cyan",
                "expired": "dim", "withdrawn": "dim"}
RISK_STYLE = {"high": "red bold", "medium": "yellow", "low": "dim"}


def _call(fn):
    """Run an inbox call: a second decision and failures exit 1, people's errors 2, each as one line."""
    return call(fn, second_decision_fails=True)


def _when(dt) -> str:
    """The supervisor's local time, with the zone (the same words every view uses)."""
    from core.api import local_time

    return local_time(dt)


def _hints(r) -> list[str]:
    if r.status != "pending":
        return []
    allowed = r.meta.get("allowed") if r.source == "loop" else None
    allowed = allowed or (["approve", "reject"] if r.kind == "approval" else ["respond", "reject"])
    hint = {"approve": f"ars inbox approve {shlex.quote(r.id)} [--note TEXT]",
            "reject": f"ars inbox reject {shlex.quote(r.id)} --reason TEXT",
            "respond": f'ars inbox respond {shlex.quote(r.id)} "TEXT"'}
    lines = [hint[a] for a in allowed if a in hint]
    if "edit" in allowed and r.source == "loop":
        lines.append(f"ars loop edit {shlex.quote(str(r.meta.get('loop_id', '')))} --args JSON")
    return lines


def _print_record(rec, indent: str = "") -> None:
    """The request's audit record (core/inbox/audit_text.py): the same lines every view shows."""
    from core.api import audit_lines

    rows = audit_lines(rec)
    width = max(len(k) for k, _ in rows) + 1
    for label, text in rows:
        style = {"outcome": STATUS_STYLE.get(rec.request.status, ""), "risk": RISK_STYLE.get(rec.request.risk, ""),
                 "signature": "red bold" if rec.signature == "invalid" else "yellow" if rec.signature == "unsigned"
                 else ""}.get(label, "")
        body = _esc(str(text)).replace("\n", "\n" + indent + " " * (width + 1))
        out.print(f"{indent}[dim]{label + ':':<{width}}[/] " + (f"[{style}]{body}[/]" if style else body),
                  highlight=False, soft_wrap=True)


def _print_request(rec) -> None:
    r = rec.request
    _print_record(rec)
    if r.detail:
        from tui.cli.passphrase import short_hash

        out.print(f"exact hash: {short_hash(r.exact_hash())}  (the passphrase prompt names the same)", highlight=False)
    for k, v in r.meta.items():
        if k in ("allowed", "history"):
            continue
        text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
        out.print(f"  [dim]{_esc(k)}: {_esc(text[:300])}[/]", highlight=False, soft_wrap=True)
    for h in _hints(r):
        out.print(f"  [dim]{_esc(h)}[/]", highlight=False)


def _dump(items) -> None:
    sys.stdout.write(json.dumps(items, ensure_ascii=False) + "\n")


def _since(value: str | None):
    """``--since``: an ISO date or time (UTC unless it says), or a span back from now: 30m, 12h, 7d."""
    if value is None:
        return None
    from datetime import datetime, timedelta, timezone

    text = value.strip()
    units = {"m": 60, "h": 3600, "d": 86400}
    if text[:-1].isdigit() and text[-1:] in units:
        return datetime.now(timezone.utc) - timedelta(seconds=int(text[:-1]) * units[text[-1]])
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:

        fail(f"--since {value!r} is not a date: write 2026-11-30, 2026-11-30T09:00, or 12h / 7d back from now")
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


@inbox_app.command("list")
def inbox_list(status: Annotated[Optional[str], typer.Option("--status", help="pending, approved, rejected, answered, expired or withdrawn")] = None,
               every: Annotated[bool, typer.Option("--all", help="every request ever made, loops' decided ones too: the audit")] = False,
               since: Annotated[Optional[str], typer.Option("--since", help="made or decided since: 2026-11-30, 12h, 7d")] = None,
               state: StateOpt = None, as_json: JsonOpt = False) -> None:
    """Requests waiting for a person (and decided ones), newest first, from every source."""
    from core.api import audit_outcome as outcome

    after = _since(since)
    with open_ars(state) as ars:
        if every:
            records = _call(lambda: ars.inbox_audit(status=status, since=after))
            items = [rec.request for rec in records]
        else:
            items = _call(lambda: ars.inbox_list(status, every=every, since=after))
        warn(ars.inbox.problems)
        warn(ars.loops.warnings if getattr(ars, "_loops", None) is not None else [])
    if as_json:
        _dump([{**rec.request.model_dump(mode="json"), "outcome": rec.outcome,
                "audit": rec.model_dump(mode="json", exclude={"request"})} for rec in records] if every else
              [{**r.model_dump(mode="json"), "outcome": outcome(r)} for r in items])
        return
    if every and items:  # the audit: every request's whole record, as `ars inbox show` prints it
        for n, rec in enumerate(records):
            if n:
                out.print("")
            _print_record(rec)
        out.print(f"[dim]{len(items)} requests, {sum(r.status == 'pending' for r in items)} pending[/]",
                  highlight=False)
        return
    if not items:
        out.print("[dim]the inbox is empty: nothing waits for a person[/]" if not (every or after or status) else
                  "[dim]no request matches[/]")
        return
    # two lines a request, three once decided (no table: an id is never cut, it is typed back)
    for r in items:
        out.print(f"[bold]{_esc(r.id)}[/]  [{STATUS_STYLE.get(r.status, '')}]{r.status}[/]  {r.kind}  "
                  f"risk [{RISK_STYLE.get(r.risk, '')}]{r.risk}[/]  {_when(r.created_at)}  from {_esc(r.source)}",
                  highlight=False, soft_wrap=True)
        out.print(f"  {_esc(r.summary)}", highlight=False, soft_wrap=True)
        d = r.decision
        if d is not None:
            note = f": {d.note}" if d.note else ""
            out.print(f"  [dim]{outcome(r)} · {_when(d.decided_at)} · by {_esc(d.decided_by or '?')}{_esc(note)}[/]",
                      highlight=False, soft_wrap=True)
    pending = sum(r.status == "pending" for r in items)
    out.print(f"[dim]{len(items)} requests, {pending} pending: ars inbox show ID · approve ID · reject ID --reason R"
              " · respond ID TEXT[/]", highlight=False)

@inbox_app.command("show")
def inbox_show(request_id: IdArg, state: StateOpt = None, as_json: JsonOpt = False) -> None:
    """One request: what it asks, exactly what will run, its decision if any."""

    with open_ars(state) as ars:
        rec = _call(lambda: ars.inbox_audit(request_id))
    if as_json:
        _dump({**rec.request.model_dump(mode="json"), "outcome": rec.outcome,
               "audit": rec.model_dump(mode="json", exclude={"request"})})
    else:
        _print_request(rec)


def _decide(request_id: str, verdict: str, note: str, state: Path | None, as_json: bool,
            passphrase_fd: int | None) -> None:

    with open_ars(state) as ars:
        r = _call(lambda: ars.inbox_get(request_id))
        runs = f" (runs: {' '.join(r.detail.split())[:120]})" if r.detail else ""
        # no passphrase for a request that is no longer pending: deciding it says who decided, or that it ended
        signer = signer_for(ars, passphrase_fd, f"{verdict} {request_id}{runs}", r) if r.status == "pending" else None
        shown = r  # what the passphrase prompt named: the signature covers this copy, never a re-read
        r = _call(lambda: ars.inbox_decide(request_id, verdict, note, signer=signer, shown=shown))
    if signer is None and r.source != "loop" and verdict == "approve":
        warn(["unverified approval: no supervisor key is set up, so the agent's hook will not act on it (its own "
               "prompt asks instead); run `ars supervisor init` once, then `ars install <agent>` again"])
        warn(ars.loops.warnings if getattr(ars, "_loops", None) is not None else [])
    if as_json:
        _dump(r.model_dump(mode="json"))
        return
    out.print(f"{_esc(r.id)}: [{STATUS_STYLE.get(r.status, '')}]{r.status}[/]"
              + (f" ({_esc(r.decision.note)})" if r.decision and r.decision.note else ""), highlight=False)
    if r.source == "loop":
        out.print(f"loop {_esc(str(r.meta.get('loop_id')))} resumed: now {r.meta.get('loop_status')} "
                  f"(ars loop show {_esc(str(r.meta.get('loop_id')))})", highlight=False)


NoteOpt = Annotated[str, typer.Option("--note", help="why (kept in the ledger)")]


@inbox_app.command("approve")
def inbox_approve(request_id: IdArg, note: NoteOpt = "", state: StateOpt = None, as_json: JsonOpt = False,
                  passphrase_fd: PassFdOpt = None) -> None:
    """Approve the request (a loop's resumes; an agent waiting on it goes ahead)."""
    _decide(request_id, "approve", note, state, as_json, passphrase_fd)


@inbox_app.command("reject")
def inbox_reject(request_id: IdArg,
                 reason: Annotated[str, typer.Option("--reason", help="why not (required; the agent is told)")] = "",
                 state: StateOpt = None, as_json: JsonOpt = False, passphrase_fd: PassFdOpt = None) -> None:
    """Reject the request, with a reason the agent is told."""
    _decide(request_id, "reject", reason, state, as_json, passphrase_fd)


@inbox_app.command("respond")
def inbox_respond(request_id: IdArg, text: Annotated[str, typer.Argument(help="the answer")],
                  state: StateOpt = None, as_json: JsonOpt = False, passphrase_fd: PassFdOpt = None) -> None:
    """Answer a question (or unblock a blocked loop with guidance)."""
    _decide(request_id, "respond", text, state, as_json, passphrase_fd)
