"""A loop's open request (``waiting_human`` step or blocker) seen as an inbox request.

Its id is ``loop:<loop_id>:<request_id>``; it is decided through the loop's own
decision file (``core.loop.decisions``), so ``ars loop approve`` and ``ars inbox
approve`` act on the same record and the second of them is refused."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from core.inbox.models import STATUS_OF, InboxDecision, InboxRequest
from core.inbox.store import UnknownRequest

if TYPE_CHECKING:
    from core.loop.models import Decision, LoopState, PendingApproval

PREFIX = "loop:"
KIND = {"approval": "approval", "question": "question", "unblock": "blocker"}


def is_loop_id(request_id: str) -> bool:
    return isinstance(request_id, str) and request_id.startswith(PREFIX)


def split_id(request_id: str) -> tuple[str, str]:
    """(loop_id, request_id) of ``loop:<loop_id>:<request_id>`` (a loop id may hold ':')."""
    loop_id, sep, req = request_id[len(PREFIX):].rpartition(":")
    if not sep or not loop_id or not req:
        raise UnknownRequest(f"bad loop request id {request_id[:120]!r}: it looks like loop:<loop_id>:<request_id> "
                             "(`ars inbox list` shows them)")
    return loop_id, req


def inbox_id(loop_id: str, request_id: str) -> str:
    return f"{PREFIX}{loop_id}:{request_id}"


def action_detail(p: "PendingApproval") -> str:
    """Exactly what will run: a shell command as it runs, else the tool and its JSON arguments."""
    a = p.action
    if a is None:
        return ""
    cmd = a.args.get("cmd") if a.tool == "shell" else None
    if isinstance(cmd, str):
        return cmd
    return f"{a.tool} {json.dumps(a.args, ensure_ascii=False, sort_keys=True)}"


def _risk(state: "LoopState", p: "PendingApproval") -> str:
    """A risky tool's approval is high; otherwise the goal's own risk level (never below medium for
    an action a person must approve)."""
    if p.kind == "approval" and "risky" in p.risk or state.goal.risk_level == "high":
        return "high"
    return "medium"


def from_pending(state: "LoopState") -> InboxRequest | None:
    """The loop's open request as an inbox request, or None when it has none."""
    p = state.pending_approval
    if p is None or state.status not in ("waiting_human", "blocked"):
        return None
    return InboxRequest(
        id=inbox_id(state.loop_id, p.request_id), source="loop", kind=KIND[p.kind],  # type: ignore[arg-type]
        summary=" ".join(p.prompt.split()) or f"loop {state.loop_id} waits for a person",
        detail=action_detail(p), risk=_risk(state, p),
        created_at=p.created_at, status="pending",
        meta={"loop_id": state.loop_id, "request_id": p.request_id, "goal_id": state.goal_id, "goal": state.goal.goal,
              "loop_status": state.status, "allowed": list(p.allowed), "iteration": p.iteration,
              "risk_reason": p.risk, **({"tool": p.action.tool, "args": p.action.args} if p.action else {})})


def decided(state: "LoopState", request_id: str, d: "Decision", before: InboxRequest | None = None) -> InboxRequest:
    """A loop request that has its decision (``before``: the request as it was pending)."""
    # the signature goes with it: an audit verifies it (core/inbox/audit.py), wherever it was signed
    dec = InboxDecision(verdict=d.kind, note=d.note, decided_by=d.decided_by, decided_at=d.decided_at,
                        signed=d.signed, signature=d.signature, key=d.key)
    base = before or InboxRequest(
        id=inbox_id(state.loop_id, request_id), source="loop", kind="approval",
        summary=f"request {request_id} of loop {state.loop_id} (goal: {' '.join(state.goal.goal.split())})",
        created_at=d.decided_at, meta={"loop_id": state.loop_id, "request_id": request_id, "goal_id": state.goal_id})
    meta = {**base.meta, "loop_status": state.status}
    return base.model_copy(update={"status": STATUS_OF[d.kind], "decision": dec, "meta": meta})
