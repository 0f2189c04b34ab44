"""Every request for a person in one list: the agents' requests (``Inbox``) and each
loop's open request or blocker (id ``loop:<loop>:<request>``), got and decided exactly
once whichever kind it is. ``core.api.ARS`` calls these with its inbox and loop calls."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any, Callable

from core.errors import BadQuery


def list_requests(inbox, loop_list: Callable, loop_store, status: str | None, every: bool,
                  since: datetime | None) -> list:
    """Agents' requests and every loop's open request or blocker, newest first; ``every``:
    loops' decided requests too (the audit); ``since``: made or decided then or later."""
    from core.inbox.audit import loop_decided, since_filter
    from core.inbox.loops import from_pending

    items = list(inbox.list(status))
    states: list = []
    if status in (None, "pending") or every:
        states, problems = loop_list()
        inbox.problems.extend(problems)
    if status in (None, "pending"):
        items.extend(r for r in (from_pending(s) for s in states) if r is not None)
    if every:
        items.extend(r for r in loop_decided(loop_store(), states) if status in (None, r.status))
    items = since_filter(items, since)
    items.sort(key=lambda r: (r.created_at, r.id), reverse=True)
    return items


def get_request(inbox, state_dir: Path, request_id: str, loop_show: Callable, store_of: Callable | None = None):
    """One request (an agent's, or ``loop:<loop>:<request>``) with its decision, if any; a loop's
    decided one as it was asked (read from its history through ``store_of``)."""
    from core.inbox.loops import decided, from_pending, is_loop_id, split_id

    if not is_loop_id(request_id):
        return inbox.get(request_id)
    from core.inbox import UnknownRequest
    from core.loop.checkpoints import LoopNotFound
    from core.loop.decisions import CorruptDecision, read_decision

    loop_id, req_id = split_id(request_id)
    try:
        state = loop_show(loop_id)
    except LoopNotFound:
        raise UnknownRequest(f"no inbox request {request_id!r}: there is no loop {loop_id!r} "
                             "(`ars inbox list` shows the open requests)") from None
    pending = from_pending(state)
    try:
        d = read_decision(state_dir, loop_id, req_id)
    except CorruptDecision:  # settled by the next decision (core/loop/decisions.py): open until then
        d = None
    if d is not None:
        if pending is not None and pending.id == request_id:
            return decided(state, req_id, d, pending)
        if store_of is not None:
            from core.inbox.audit import of_loop

            found = of_loop(store_of(), state.model_copy(update={"decisions": [d]}), None)
            if found:
                return found[0].request
        return decided(state, req_id, d)
    if pending is not None and pending.id == request_id:
        return pending
    raise UnknownRequest(f"loop {loop_id} has no request {req_id!r}"
                         + (f"; its open request is {pending.id}" if pending else " open")
                         + " (`ars inbox list` shows the open requests)")


def decide_request(inbox, state_dir: Path, request_id: str, verdict: str, note: str, signer: Any, *,
                   require_signer: Callable, get: Callable, loop_decide: Callable, shown: Any = None):
    """Decide a request exactly once: a loop's through ``loop_decide`` (the loop resumes);
    an agent's through ``Inbox.decide``. With a supervisor key set up, only a signed decision."""
    from core.inbox.loops import decided, is_loop_id, split_id

    if not is_loop_id(request_id):
        if signer is None and inbox.get(request_id).status == "pending":
            require_signer(signer)  # one that is not pending says who decided, or that it ended
        return inbox.decide(request_id, verdict, note, signer=signer, shown=shown)
    from core.infra.once import AlreadyDecided
    from core.loop.decisions import describe, read_decision

    if verdict not in ("approve", "reject", "respond", "edit"):
        raise BadQuery(f"unknown verdict {verdict!r}: approve, reject or respond")
    if verdict == "edit":
        loop_id, _ = split_id(request_id)
        raise BadQuery(f"edit a loop's proposed action with `ars loop edit {loop_id} --args JSON`")
    before = get(request_id)  # UnknownRequest, or its decision already
    loop_id, req_id = split_id(request_id)
    if before.decision is not None:
        d = read_decision(state_dir, loop_id, req_id)
        raise AlreadyDecided(f"{describe(d) if d else f'request {req_id} of loop {loop_id} was already decided'}; "
                             "a second decision is refused")
    state = loop_decide(loop_id, verdict, note=note, request_id=req_id, signer=signer)
    d = read_decision(state_dir, loop_id, req_id)
    if d is None:  # not expected: the claim wrote it before the loop resumed
        raise RuntimeError(f"{request_id}: the decision was recorded but cannot be read back")
    return decided(state, req_id, d, before if before.status == "pending" else None)
