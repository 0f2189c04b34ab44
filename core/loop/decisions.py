"""Human decisions on a waiting (or blocked) loop: approve, reject, edit, respond.

Exactly once per request: a decision is claimed by creating
``approvals/<loop>__<request>.json`` with ``link(2)`` from a complete temp
file, which fails if the name exists (atomic on POSIX file systems, across
processes). So of two people (or processes) deciding the same request at the
same moment one wins; the other is told who decided what, and when. The
winning decision is then written to the ledger (``human.decision``, stable
id per loop and request); the engine applies it when the loop resumes from
its checkpoint, and writes the ledger event itself if a crash came between.
Deciding holds the loop's run lock for those few milliseconds, so an engine
never applies a decision whose ledger event is still being written.

A decision file that cannot be read (cut short, garbage, a directory) is
reported by name and settled under the run lock, by one rule: a decision
exists once its ``human.decision`` event is in the ledger (it is written
right after the file, and the person is told only after both). So:

* the ledger holds the event: the decision stands; the file is rebuilt from
  the event (the bad one kept as ``<name>.corrupt``) and the decision applies
  (or refuses a second one) as usual;
* it does not: the writer died before the decision was complete, so nothing
  was decided and nothing acted on it. The file is moved aside as
  ``<name>.corrupt`` (``.corrupt.1``... if that exists) and the request is
  open again: the next ``approve``/``reject``/``edit``/``respond`` on it is
  taken, exactly once, as usual.

``ars loop show`` says which case a stuck file is in; ``resume`` or any
decision settles it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from core.errors import first_error
from core.infra.fsutil import fsync_dir
from core.events import HUMAN_DECISION_EVENT
from core.ledger.ledger import Event, Ledger, content_id
from core.infra.once import AlreadyDecided, create_once, who  # noqa: F401 - who() is also this module's API
from core.errors import BadQuery
from core.loop.checkpoint_names import LOOP_NAME_BYTES, safe_name
from core.loop.checkpoints import CheckpointStore
from core.loop.models import Decision, LoopState, PendingApproval
from core.loop.tools import ToolRegistry

APPROVALS = "approvals"
PAST = {"approve": "approved", "reject": "rejected", "edit": "edited and approved", "respond": "answered"}


class NotWaiting(BadQuery):
    """A decision on a loop that is not waiting for one."""


class CorruptDecision(RuntimeError):
    """A decision file that cannot be read."""

    def __init__(self, path: Path, error: str):
        self.path = Path(path)
        self.error = error
        super().__init__(f"decision file {APPROVALS}/{self.path.name} cannot be read ({error})")


def decision_path(state_dir: Path, loop_id: str, request_id: str) -> Path:
    return (Path(state_dir) / APPROVALS /
            f"{safe_name(loop_id, LOOP_NAME_BYTES)}__{safe_name(request_id, LOOP_NAME_BYTES)}.json")


def read_decision(state_dir: Path, loop_id: str, request_id: str) -> Decision | None:
    """The decision on one request, or None; ``CorruptDecision`` when its file
    cannot be read (claim() makes it appear complete, so that is damage or a
    writer that died mid-write: see the module notes)."""
    path = decision_path(state_dir, loop_id, request_id)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise CorruptDecision(path, "it is a directory, not a file") from None
    except OSError as exc:
        raise CorruptDecision(path, exc.strerror or str(exc)) from None
    try:
        d = Decision.model_validate_json(raw)
    except (ValidationError, ValueError) as exc:
        what = "empty" if not raw.strip() else \
            first_error(exc) if isinstance(exc, ValidationError) else " ".join(str(exc).split())[:160]
        raise CorruptDecision(path, what) from None
    if d.loop_id != loop_id or d.request_id != request_id:
        raise CorruptDecision(path, f"it holds the decision on {d.loop_id} {d.request_id}, not on this request")
    return d


def _peek(state_dir: Path, loop_id: str, request_id: str) -> Decision | None:
    """read_decision for messages only: an unreadable file counts as none."""
    try:
        return read_decision(state_dir, loop_id, request_id)
    except CorruptDecision:
        return None


def ledger_decision(state_dir: Path, loop_id: str, request_id: str) -> Decision | None:
    """The decision as the ledger recorded it (its ``human.decision`` event), if it did."""
    want = content_id(HUMAN_DECISION_EVENT, loop_id, request_id)
    for e in Ledger(state_dir).read(types=(HUMAN_DECISION_EVENT,)):
        if e.event_id == want:
            try:
                return Decision.model_validate(e.data)
            except ValidationError:
                return None
    return None


def _aside(path: Path) -> Path:
    """Move an unreadable decision file out of the way (kept, never deleted)."""
    target = path.with_name(path.name + ".corrupt")
    n = 0
    while target.exists() or target.is_symlink():
        n += 1
        target = path.with_name(f"{path.name}.corrupt.{n}")
    os.rename(path, target)
    fsync_dir(path.parent)
    return target


def settle_corrupt(state_dir: Path, loop_id: str, request_id: str) -> tuple[Decision | None, str]:
    """Settle an unreadable decision file by the module's rule. Call it holding
    the loop's run lock. Returns the decision that stands (from the ledger) or
    None (the request is open again), and a line saying what was done."""
    path = decision_path(state_dir, loop_id, request_id)
    try:
        read_decision(state_dir, loop_id, request_id)
        return _peek(state_dir, loop_id, request_id), ""  # readable after all (settled meanwhile)
    except CorruptDecision as exc:
        problem = exc
    recorded = ledger_decision(state_dir, loop_id, request_id)
    kept = _aside(path)
    where = f"{APPROVALS}/{path.name}"
    if recorded is not None:
        claim(state_dir, recorded)
        return recorded, (f"decision file {where} could not be read ({problem.error}); the ledger holds that "
                          f"decision, so it stands: the file was rebuilt from the ledger (the bad one kept as "
                          f"{kept.name})")
    return None, (f"decision file {where} could not be read ({problem.error}) and the ledger has no such "
                  f"decision: its writer died before it was complete, so nothing was decided; it was moved "
                  f"aside as {kept.name} and request {request_id} is open again")


def pending_problem(state_dir: Path, state: LoopState) -> str | None:
    """What is wrong with the decision file of the loop's open request, and what
    to do (read only: for ``ars loop show``); None when nothing is."""
    p = state.pending_approval
    if p is None:
        return None
    try:
        read_decision(state_dir, state.loop_id, p.request_id)
        return None
    except CorruptDecision as exc:
        problem = exc
    if ledger_decision(state_dir, state.loop_id, p.request_id) is not None:
        fix = (f"the ledger holds the decision, so it stands: `ars loop resume {state.loop_id}` rebuilds the file "
               "and applies it")
    else:
        fix = (f"the ledger has no such decision (its writer died mid-write), so nothing was decided: decide again "
               f"(e.g. `ars loop {p.allowed[0]} {state.loop_id} ...`); the bad file is then moved aside as "
               f"{problem.path.name}.corrupt")
    return f"{problem}: {fix}"


def find_decision(state_dir: Path, state: LoopState) -> Decision | None:
    """The decision on the loop's open request, if a person has made it."""
    p = state.pending_approval
    if p is None:
        return None
    return read_decision(state_dir, state.loop_id, p.request_id)


def record_decision_event(d: Decision) -> Event:
    return Event(content_id(HUMAN_DECISION_EVENT, d.loop_id, d.request_id), HUMAN_DECISION_EVENT,
                 d.model_dump(mode="json"), ts=d.decided_at.isoformat())


def describe(d: Decision) -> str:
    when = d.decided_at.strftime("%Y-%m-%d %H:%M:%S UTC")
    note = f" ({d.note})" if d.note else ""
    by = f" by {d.decided_by}" if d.decided_by else ""
    return f"request {d.request_id} of loop {d.loop_id} was already {PAST[d.kind]} at {when}{by}{note}"


def claim(state_dir: Path, d: Decision) -> None:
    """Write the decision file exactly once, or raise ``AlreadyDecided``."""
    if not create_once(decision_path(state_dir, d.loop_id, d.request_id), d.model_dump_json(indent=1).encode()):
        first = read_decision(state_dir, d.loop_id, d.request_id)
        raise AlreadyDecided(f"{describe(first) if first else f'request {d.request_id} was already decided'}; "
                             "a second decision is refused")


def decide(state_dir: Path, loop_id: str, kind: str, *, note: str = "", args: dict[str, Any] | None = None,
           request_id: str | None = None, tools: ToolRegistry | None = None,
           store: CheckpointStore | None = None, signer=None) -> Decision:
    """Record one decision on the loop's open request (it is applied when the loop resumes).

    Taken under the loop's run lock, so no engine applies the decision between
    the claim and its ledger event (which would write that event twice)."""
    store = store or CheckpointStore(state_dir)
    store.load(loop_id)  # an unknown loop is bad input before any lock file is made
    with store.lock(loop_id):
        return _decide_locked(state_dir, store, loop_id, kind, note, args, request_id, tools, signer)


def _decide_locked(state_dir: Path, store: CheckpointStore, loop_id: str, kind: str, note: str,
                   args: dict[str, Any] | None, request_id: str | None, tools: ToolRegistry | None,
                   signer=None) -> Decision:
    state = store.load(loop_id).state
    p = state.pending_approval
    if request_id is not None and (p is None or request_id != p.request_id):
        earlier = _peek(state_dir, loop_id, request_id)
        if earlier is not None:
            raise AlreadyDecided(f"{describe(earlier)}; a second decision is refused")
        open_one = f"; the open request is {p.request_id}" if p else ""
        raise NotWaiting(f"loop {loop_id} has no open request {request_id!r}{open_one}")
    if p is None or state.status not in ("waiting_human", "blocked"):
        earlier = _peek(state_dir, loop_id, state.decisions[-1].request_id) if state.decisions else None
        last = f"; {describe(earlier)}" if earlier else ""
        raise NotWaiting(f"loop {loop_id} is not waiting for a decision (status {state.status}){last}; "
                         f"nothing to {kind}")
    try:
        existing = read_decision(state_dir, loop_id, p.request_id)
    except CorruptDecision:
        existing, line = settle_corrupt(state_dir, loop_id, p.request_id)
        store.warnings.append(line)
    if existing is not None:
        raise AlreadyDecided(f"{describe(existing)}; a second decision is refused")
    _validate(p, kind, note, args, tools)
    d = Decision(loop_id=loop_id, request_id=p.request_id, kind=kind, note=note.strip(),  # type: ignore[arg-type]
                 args=args if kind == "edit" else None,
                 original_args=dict(p.action.args) if kind == "edit" and p.action else None,
                 iteration=p.iteration, decided_by=who())
    if signer is not None:
        from core.inbox.signing import short

        d = d.model_copy(update={"decided_by": f"supervisor {short(signer.fingerprint)} ({d.decided_by})",
                                 **signer.sign_decision(request_id=signed_request_id(d), input_hash=decided_hash(p, d),
                                                        verdict=kind, note=d.note, decided_at=d.decided_at)})
    claim(state_dir, d)
    Ledger(state_dir).append([record_decision_event(d)])
    return d


def signed_request_id(d: Decision) -> str:
    """The id a loop decision's signature names: the inbox's ``loop:<loop>:<request>``."""
    return f"loop:{d.loop_id}:{d.request_id}"


def decided_hash(p: PendingApproval, d: Decision) -> str:
    """The hash a loop decision signs: of exactly what will run (the edited action for an edit)."""
    from core.inbox.loops import action_detail
    from core.inbox.signing import input_hash

    if d.kind == "edit" and p.action is not None:
        p = p.model_copy(update={"action": p.action.model_copy(update={"args": d.args or {}})})
    return input_hash("loop", action_detail(p))


def verify(state_dir: Path, p: PendingApproval, d: Decision, pin: str | None) -> str:
    """"" when the engine may act on ``d``; else why not (one line). A state
    directory with no supervisor key (and no pin) takes unverified decisions:
    ARS's own loops in the demo; with one, only a decision signed by the pinned
    key (else the key in the state directory) for this request and this action."""
    from core.inbox.signing import public_fingerprint, verify_decision

    pin = pin or public_fingerprint(state_dir)
    if pin is None:
        return ""
    payload, why = verify_decision(d.model_dump(mode="json"), pin=pin, request_id=signed_request_id(d),
                                   input_hash=decided_hash(p, d), now=d.decided_at)
    if payload is not None and payload.get("verdict") != d.kind:
        return f"it was signed as {payload.get('verdict')!r}, not {d.kind!r}"
    return why if payload is None else ""


def _validate(p: PendingApproval, kind: str, note: str, args: dict[str, Any] | None,
              tools: ToolRegistry | None) -> None:
    if kind not in ("approve", "reject", "edit", "respond"):
        raise BadQuery(f"unknown decision {kind!r}: approve, reject, edit or respond")
    if kind not in p.allowed:
        what = {"approval": "an approval request", "question": "a question", "unblock": "a blocked loop"}[p.kind]
        raise BadQuery(f"cannot {kind} {what} (request {p.request_id}): use {' or '.join(p.allowed)}")
    if kind == "reject" and not note.strip():
        raise BadQuery("a rejection needs a reason: --reason \"why not\"")
    if kind == "respond" and not note.strip():
        raise BadQuery("a response needs text: ars loop respond ID \"your answer\"")
    if kind == "edit":
        if not isinstance(args, dict):
            raise BadQuery("edit needs the new arguments as a JSON object: --args '{\"cmd\": \"...\"}'")
        if p.action is None:
            raise BadQuery(f"request {p.request_id} proposes no action to edit")
        if tools is not None and p.action.tool in tools:
            problem = tools.get(p.action.tool).check_args(args)
            if problem:
                raise BadQuery(f"edited arguments for {p.action.tool}: {problem}")
