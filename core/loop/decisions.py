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
"""

from __future__ import annotations

import getpass
import os
import socket
import uuid
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..fsutil import fsync_dir
from ..ledger import Event, Ledger, content_id
from ..recall import BadQuery
from .checkpoints import LOOP_NAME_BYTES, CheckpointStore, safe_name
from .models import Decision, LoopState, PendingApproval
from .tools import ToolRegistry

APPROVALS = "approvals"
PAST = {"approve": "approved", "reject": "rejected", "edit": "edited and approved", "respond": "answered"}


class AlreadyDecided(BadQuery):
    """A second decision on a request that already has one."""


class NotWaiting(BadQuery):
    """A decision on a loop that is not waiting for one."""


def decision_path(state_dir: Path, loop_id: str, request_id: str) -> Path:
    return (Path(state_dir) / APPROVALS /
            f"{safe_name(loop_id, LOOP_NAME_BYTES)}__{safe_name(request_id, LOOP_NAME_BYTES)}.json")


def read_decision(state_dir: Path, loop_id: str, request_id: str) -> Decision | None:
    path = decision_path(state_dir, loop_id, request_id)
    try:
        return Decision.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        return None
    except (ValidationError, ValueError) as exc:
        # cannot happen through claim() (the file appears complete or not at all)
        raise RuntimeError(f"decision file {path.name} is corrupt: {' '.join(str(exc).split())[:160]}") from None


def find_decision(state_dir: Path, state: LoopState) -> Decision | None:
    """The decision on the loop's open request, if a person has made it."""
    p = state.pending_approval
    if p is None:
        return None
    return read_decision(state_dir, state.loop_id, p.request_id)


def record_decision_event(d: Decision) -> Event:
    return Event(content_id("human.decision", d.loop_id, d.request_id), "human.decision",
                 d.model_dump(mode="json"), ts=d.decided_at.isoformat())


def describe(d: Decision) -> str:
    when = d.decided_at.strftime("%Y-%m-%d %H:%M:%S UTC")
    note = f" ({d.note})" if d.note else ""
    by = f" by {d.decided_by}" if d.decided_by else ""
    return f"request {d.request_id} of loop {d.loop_id} was already {PAST[d.kind]} at {when}{by}{note}"


def who() -> str:
    try:
        user = getpass.getuser()
    except Exception:  # noqa: BLE001 - no login name in some containers
        user = "unknown"
    return f"{user}@{socket.gethostname()}:{os.getpid()}"


def claim(state_dir: Path, d: Decision) -> None:
    """Write the decision file exactly once, or raise ``AlreadyDecided``."""
    path = decision_path(state_dir, d.loop_id, d.request_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(d.model_dump_json(indent=1).encode())
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, path)  # fails with EEXIST if anyone decided first: the exclusive create
        except FileExistsError:
            first = read_decision(state_dir, d.loop_id, d.request_id)
            raise AlreadyDecided(f"{describe(first) if first else f'request {d.request_id} was already decided'}; "
                                 "a second decision is refused") from None
        fsync_dir(path.parent)
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass


def decide(state_dir: Path, loop_id: str, kind: str, *, note: str = "", args: dict[str, Any] | None = None,
           request_id: str | None = None, tools: ToolRegistry | None = None,
           store: CheckpointStore | None = None) -> Decision:
    """Record one decision on the loop's open request (it is applied when the loop resumes).

    Taken under the loop's run lock, so no engine applies the decision between
    the claim and its ledger event (which would write that event twice)."""
    store = store or CheckpointStore(state_dir)
    store.load(loop_id)  # an unknown loop is bad input before any lock file is made
    with store.lock(loop_id):
        return _decide_locked(state_dir, store, loop_id, kind, note, args, request_id, tools)


def _decide_locked(state_dir: Path, store: CheckpointStore, loop_id: str, kind: str, note: str,
                   args: dict[str, Any] | None, request_id: str | None, tools: ToolRegistry | None) -> Decision:
    state = store.load(loop_id).state
    p = state.pending_approval
    if request_id is not None and (p is None or request_id != p.request_id):
        earlier = read_decision(state_dir, loop_id, request_id)
        if earlier is not None:
            raise AlreadyDecided(f"{describe(earlier)}; a second decision is refused")
        open_one = f"; the open request is {p.request_id}" if p else ""
        raise NotWaiting(f"loop {loop_id} has no open request {request_id!r}{open_one}")
    if p is None or state.status not in ("waiting_human", "blocked"):
        earlier = read_decision(state_dir, loop_id, state.decisions[-1].request_id) if state.decisions else None
        last = f"; {describe(earlier)}" if earlier else ""
        raise NotWaiting(f"loop {loop_id} is not waiting for a decision (status {state.status}){last}; "
                         f"nothing to {kind}")
    existing = read_decision(state_dir, loop_id, p.request_id)
    if existing is not None:
        raise AlreadyDecided(f"{describe(existing)}; a second decision is refused")
    _validate(p, kind, note, args, tools)
    d = Decision(loop_id=loop_id, request_id=p.request_id, kind=kind, note=note.strip(),  # type: ignore[arg-type]
                 args=args if kind == "edit" else None,
                 original_args=dict(p.action.args) if kind == "edit" and p.action else None,
                 iteration=p.iteration, decided_by=who())
    claim(state_dir, d)
    Ledger(state_dir).append([record_decision_event(d)])
    return d


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
