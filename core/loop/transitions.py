"""One commit per loop transition, in this order:

1. a ``HistoryEntry`` appended (and fsync'd) to the loop's history file;
2. a ``loop.transition`` event in the ledger, with the stable id
   ``content_id(LOOP_TRANSITION_EVENT, loop_id, seq)``, appended only if absent;
3. the checkpoint replaced atomically.

A crash between 1 and 3 leaves a history entry newer than the checkpoint;
loading rolls forward to it and re-emits its ledger event if it is missing,
so a SIGKILL at any point loses nothing acknowledged and duplicates nothing.
The ``record`` step writes ``loop.record`` (stable id per loop and iteration,
appended only if absent) and upserts an ``Episode`` (stable id
``loop:<loop_id>:<iteration>``) into memory, so the next observe recalls it.
Tool side effects are at-least-once: a tool killed mid-run is run again.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

from core.events import LOOP_TRANSITION_EVENT
from core.ledger.ledger import Event, Ledger, content_id
from core.loop.checkpoints import CheckpointStore
from core.loop.models import HistoryEntry, LoopState, now, validate_transition

CRASH_ENV = "ARS_LOOP_CRASH_AT"  # fault injection for the crash tests: "<point>.<step>@<iteration>"


def crash_point(point: str, state: LoopState) -> None:
    """SIGKILL this process at a named point when ``ARS_LOOP_CRASH_AT`` asks for it
    (tests only: it proves recovery from a kill between any two writes)."""
    want = os.environ.get(CRASH_ENV)
    if want and want == f"{point}.{state.current_step}@{state.iteration}":
        os.kill(os.getpid(), signal.SIGKILL)


class Transitions:
    """The commit of a transition; the engine (``core.loop.engine.Engine``) builds on it
    and sets these attributes."""

    state_dir: Path
    store: CheckpointStore
    ledger: Ledger
    _mark: float  # time.monotonic() when the loop's elapsed time was last counted

    def _event(self, entry: HistoryEntry) -> Event:
        s = entry.state
        return Event(content_id(LOOP_TRANSITION_EVENT, s.loop_id, entry.index), LOOP_TRANSITION_EVENT, {
            "loop_id": s.loop_id, "goal_id": s.goal_id, "seq": entry.index, "kind": entry.kind,
            "from_status": entry.from_status, "to_status": entry.to_status, "from_step": entry.from_step,
            "to_step": entry.to_step, "iteration": entry.iteration, "reason": entry.reason,
        }, ts=entry.ts.isoformat())

    def _append_once(self, events: list[Event], mark: int) -> int:
        """Append the events the ledger does not hold yet (looking from ``mark``);
        returns the ledger offset after them."""
        size = self.ledger.size()
        start = mark if 0 <= mark <= size else 0
        have = {e.event_id for e in self.ledger.read(start)} if start < size else set()
        todo = [e for e in events if e.event_id not in have]
        if todo:
            return self.ledger.append(todo)[1]
        return size

    def _commit(self, old: LoopState | None, new: LoopState, kind: str, reason: str = "",
                detail: dict[str, Any] | None = None) -> LoopState:
        if old is not None:
            validate_transition(old.status, new.status, old.current_step, new.current_step)
        t = time.monotonic()
        new = new.model_copy(update={
            "seq": (old.seq if old is not None else 0) + 1,
            "updated_at": now(),
            "elapsed_s": (old.elapsed_s if old is not None else new.elapsed_s) + (t - self._mark if old else 0.0),
        })
        self._mark = t
        entry = HistoryEntry(index=new.seq, kind=kind, from_status=old.status if old else None,  # type: ignore[arg-type]
                             to_status=new.status, from_step=old.current_step if old else None,
                             to_step=new.current_step, iteration=new.iteration, reason=reason,
                             detail=detail or {}, state=new)
        self.store.append(entry)
        crash_point("after_history", old or new)
        mark = self._append_once([self._event(entry)], new.ledger_mark)
        new = new.model_copy(update={"ledger_mark": mark})
        crash_point("after_ledger", old or new)
        self.store.save(new)
        asked = new.pending_approval
        if asked is not None and (old is None or old.pending_approval is None
                                  or old.pending_approval.request_id != asked.request_id):
            from core.inbox.loops import from_pending
            from core.inbox.notify import announce

            req = from_pending(new)
            if req is not None:
                announce(self.state_dir, req)  # the supervisor is told wherever they are (a detached sender)
        return new
