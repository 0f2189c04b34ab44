"""Every request ever made, decided or not: the supervisor's audit, one true record each.

A request's record (``AuditRecord``) is built here once, and every view draws
it from here: the dashboard's decided filter (``d``), ``ars inbox show``, ``ars
inbox list --all``, the web page's decided card and ``ars export --audit``
(their words come from ``core/inbox/audit_text.py``). It says:

* what was asked, as it was asked: the kind, the risk, exactly what ran, when.
  Agents' requests keep their files after they end; a loop's request lives in
  its checkpoint while it is open and in the loop's history afterwards, so a
  decided one is read back from the history entry that asked it (never made
  up from the decision: that showed a made-up summary, the decision's time as
  "asked" and the default risk);
* who decided, when, and whether the signature holds: checked against the
  pinned supervisor key for exactly that request and what it ran, wherever
  it was signed (the dashboard, the CLI, the web page: the loop's decision
  file ``approvals/*.json`` carries the signature like an agent's decision);
* what happened next: for an agent's tool call the outcome its post-tool hook
  recorded (``inbox/<id>.outcome.json``: exit status, the output's first
  lines), else that it never ran (rejected, expired) or that nothing was
  reported; for a loop the result of the step the decision let run.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from pydantic import BaseModel

from core.inbox.loops import decided, from_pending, is_loop_id, split_id
from core.inbox.models import InboxRequest

if TYPE_CHECKING:
    from core.loop.checkpoints import CheckpointStore
    from core.loop.models import Decision, LoopState, PendingApproval

# what happened to the call, in the words of the one who asked
OUTCOME = {"pending": "waiting", "approved": "allowed", "rejected": "denied", "answered": "answered",
           "expired": "expired", "withdrawn": "withdrawn"}
OUTPUT_CHARS = 600  # of a call's or a step's output kept in the record


def outcome(req: InboxRequest) -> str:
    return OUTCOME.get(req.status, req.status)


class AuditRecord(BaseModel):
    """One request as the audit tells it: what was asked, who decided, what happened next."""

    request: InboxRequest  # as it was asked, with its decision (signature included)
    kind: str  # approval | question | blocker | agent call
    tool: str = ""  # an agent's tool call: the tool (Bash, Write, ...)
    outcome: str  # waiting | allowed | denied | answered | expired | withdrawn
    signature: str = ""  # verified | invalid | unsigned | unchecked | "" (nobody decided)
    signature_line: str = ""
    next: str = ""  # what happened next, one line
    output: str = ""  # the first lines of what ran, when recorded
    next_at: datetime | None = None


# -- what the call did next ------------------------------------------------------------------
def read_call_outcome(state_dir: Path, request_id: str) -> dict | None:
    """The outcome an agent's post-tool hook recorded for this request (``inbox/<id>.outcome.json``:
    ``ran``, ``ok``, ``exit``, ``status``, ``output``, ``by``, ``at``), or None."""
    try:
        data = json.loads((Path(state_dir) / "inbox" / f"{request_id}.outcome.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _at(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value)) if value else None
    except ValueError:
        return None


def _clip(text: str, limit: int = OUTPUT_CHARS) -> str:
    text = str(text or "").strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _call_next(req: InboxRequest, found: dict | None) -> tuple[str, str, datetime | None]:
    """(next, output, when) of an agent's request."""
    if found is not None:
        code = found.get("exit")
        status = str(found.get("status") or "")
        if found.get("ran") is False:
            what = f"never ran ({status or 'not run'})"
        else:
            what = ("ran and finished" if found.get("ok") else "ran and failed") + \
                (f": exit {code}" if isinstance(code, int) else f" ({status})" if status else "")
        by = f" by {found['by']}" if found.get("by") else ""
        return f"{what}; reported{by}", _clip(found.get("output", "")), _at(found.get("at"))
    d = req.decision
    if req.status == "pending":
        return "waiting for a decision", "", None
    if req.status == "expired":
        return "never ran: nobody decided before its agent stopped waiting", "", None
    if req.status == "rejected":
        return "never ran: rejected", "", None
    if req.status == "withdrawn":
        return f"withdrawn{': ' + d.note if d is not None and d.note else ''}", "", None
    if "tool_name" not in req.meta:
        return f"{req.source} was told it was {outcome(req)}", "", None
    return "no outcome reported: the agent's post-tool hook has not said it ran", "", None


def _loop_next(req: InboxRequest, state: "LoopState", d: "Decision", ran: Any) -> tuple[str, str]:
    """(next, output) of a loop's decided request: the result of the step it let run."""
    now = f"the loop is {state.status}"
    if d.kind == "reject":
        return f"never ran: rejected; {now}", ""
    if d.kind == "respond":
        return f"answered; {now}", ""
    if ran is None:
        return f"not run yet; {now}", ""
    what = "ran and finished" if ran.ok else "ran and failed"
    out = ran.output if ran.ok or not ran.error else f"{ran.error}\n{ran.output}"
    return f"{what}; {now}", _clip(out)


# -- the signature ---------------------------------------------------------------------------
def _signature(req: InboxRequest, pin: str | None, input_hash: str, signed_id: str) -> tuple[str, str]:
    d = req.decision
    if d is None or d.ended:
        return "", ""
    if not d.is_signed:
        return "unsigned", "unsigned: no supervisor key signed it (unverified)"
    from core.inbox.signing import short, verify_decision

    key = short(_key_of(d.key))
    if not pin:
        return "unchecked", f"signed with key {key}, not checked: no supervisor key to check it against"
    if not input_hash:
        return "unchecked", f"signed with key {key}, not checked: the request as asked is not in the loop's history"
    try:
        shown = json.loads(d.signed).get("shown_hash")
    except (ValueError, AttributeError):
        shown = None
    payload, why = verify_decision(d.model_dump(mode="json"), pin=pin, request_id=signed_id, input_hash=input_hash,
                                   now=d.decided_at, shown_hash=req.shown_hash() if shown else None)
    if payload is not None and (payload.get("verdict") != d.verdict or payload.get("note") != d.note):
        payload, why = None, "what it says was decided is not what was signed"
    if payload is None:
        return "invalid", f"signature NOT valid: {why}"
    return "verified", f"signed by the supervisor key {short(pin)}: verified"


def _key_of(key: str) -> str:
    """The fingerprint of the public key a decision carries ("?" when it cannot be read)."""
    import base64

    from core.inbox.signing import fingerprint

    try:
        raw = base64.b64decode(key, validate=True)
    except ValueError:
        return "?"
    return fingerprint(raw) if len(raw) == 32 else "?"


def kind_of(req: InboxRequest) -> tuple[str, str]:
    tool = str(req.meta.get("tool_name") or "") if req.source != "loop" else ""
    return ("agent call", tool) if tool else (req.kind, "")


def of_agent(state_dir: Path, req: InboxRequest, pin: str | None) -> AuditRecord:
    """The record of an agent's request (``req`` as ``Inbox.get`` reads it)."""
    kind, tool = kind_of(req)
    sig, line = _signature(req, pin, req.exact_hash(), req.id)
    nxt, output, at = _call_next(req, read_call_outcome(state_dir, req.id) if req.decision is not None else None)
    return AuditRecord(request=req, kind=kind, tool=tool, outcome=outcome(req), signature=sig,
                       signature_line=line, next=nxt, output=output, next_at=at)


# -- a loop's requests -----------------------------------------------------------------------
def _asked(store: "CheckpointStore", state: "LoopState") -> dict[str, tuple[InboxRequest, "PendingApproval"]]:
    """Each request this loop asked, as it was shown when asked (from its history)."""
    asked: dict[str, tuple[InboxRequest, PendingApproval]] = {}
    try:
        entries, _problems = store.history(state.loop_id)
    except Exception:  # noqa: BLE001 - an unreadable history: the decisions alone, said so
        entries = []
    for e in entries:
        p = e.state.pending_approval
        if p is not None and p.request_id not in asked:
            req = from_pending(e.state)
            if req is not None:
                asked[p.request_id] = (req, p)
    return asked


def _loop_hash(p: "PendingApproval | None", d: "Decision", req: InboxRequest) -> str:
    if p is None:
        return ""
    from core.loop.decisions import decided_hash

    return decided_hash(p, d)


def of_loop(store: "CheckpointStore", state: "LoopState", pin: str | None,
            only: str | None = None) -> list[AuditRecord]:
    """The records of a loop's decided requests (``only``: that request id alone)."""
    from core.loop.decisions import signed_request_id

    mine = [d for d in state.decisions if d.loop_id == state.loop_id and only in (None, d.request_id)]
    if not mine:  # a fork's copied decisions belong to its parent
        return []
    asked = _asked(store, state)
    out: list[AuditRecord] = []
    for d in mine:
        before, p = asked.get(d.request_id, (None, None))
        req = decided(state, d.request_id, d, before)
        if before is None:
            req.meta["history"] = "the request as asked is not in the loop's history"
        sig, line = _signature(req, pin, _loop_hash(p, d, req), signed_request_id(d))
        rec = state.iteration_record(d.iteration)
        nxt, output = _loop_next(req, state, d, rec.result if rec is not None else None)
        out.append(AuditRecord(request=req, kind=req.kind, outcome=outcome(req), signature=sig,
                               signature_line=line, next=nxt, output=output))
    return out


def of_open_loop(state: "LoopState") -> AuditRecord | None:
    req = from_pending(state)
    if req is None:
        return None
    return AuditRecord(request=req, kind=req.kind, outcome=outcome(req), next="waiting for a decision")


# -- the facade's calls ------------------------------------------------------------------------
def record_of(inbox, store_of: Callable[[], "CheckpointStore"], loop_show: Callable, get: Callable,
              request_id: str, pin: str | None) -> AuditRecord:
    """The record of one request (an agent's, or ``loop:<loop>:<request>``); ``get``: the
    facade's ``inbox_get`` (``UnknownRequest`` for a wrong id)."""
    if not is_loop_id(request_id):
        return of_agent(inbox.state_dir, inbox.get(request_id), pin)
    req = get(request_id)
    loop_id, req_id = split_id(request_id)
    state = loop_show(loop_id)
    if req.decision is None:
        rec = of_open_loop(state)
        return rec if rec is not None else AuditRecord(request=req, kind=req.kind, outcome=outcome(req))
    found = of_loop(store_of(), state, pin, only=req_id)
    if found:
        return found[0]
    return AuditRecord(request=req, kind=req.kind, outcome=outcome(req))  # decided in a parent of a fork


def every(inbox, loop_list: Callable, store_of: Callable[[], "CheckpointStore"], pin: str | None,
          status: str | None = None, since: datetime | None = None) -> list[AuditRecord]:
    """Every request's record, agents' and loops', newest first."""
    out = [of_agent(inbox.state_dir, r, pin) for r in inbox.list(status)]
    states, problems = loop_list()
    inbox.problems.extend(problems)
    store = store_of()
    for s in states:
        if status in (None, "pending"):
            rec = of_open_loop(s)
            if rec is not None:
                out.append(rec)
        out.extend(r for r in of_loop(store, s, pin) if status in (None, r.request.status))
    keep = {r.id for r in since_filter([r.request for r in out], since)}
    out = [r for r in out if r.request.id in keep]
    out.sort(key=lambda r: (r.request.created_at, r.request.id), reverse=True)
    return out


def records_of(state_dir: Path, store: "CheckpointStore", requests: Iterable[InboxRequest],
               states: Iterable["LoopState"], pin: str | None) -> list[AuditRecord]:
    """The records of these agents' requests and of these loops' decided requests (a front end
    that already holds them: nothing is listed again)."""
    out = [of_agent(state_dir, r, pin) for r in requests]
    for s in states:
        out.extend(of_loop(store, s, pin))
    return out


def loop_decided(store: "CheckpointStore", states: Iterable["LoopState"]) -> list[InboxRequest]:
    """Each decided request of these loops, as it was asked, with its decision."""
    return [r.request for s in states for r in of_loop(store, s, None)]


def since_filter(items: list[InboxRequest], since: datetime | None) -> list[InboxRequest]:
    """The requests made, or decided, at or after ``since``."""
    if since is None:
        return items
    return [r for r in items if r.created_at >= since or (r.decision is not None and r.decision.decided_at >= since)]
