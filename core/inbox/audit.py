"""Every request ever made, decided or not: the supervisor's audit.

Agents' requests keep their files (and ledger events) after they end; a
loop's request lives in its checkpoint while it is open and as a ``Decision``
afterwards. ``loop_decided`` turns each decision back into the request as the
person saw it (from the loop's history, read only for loops that have
decisions), so ``ars inbox list --all`` lists both kinds the same way.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Iterable

from core.inbox.loops import decided, from_pending
from core.inbox.models import InboxRequest

if TYPE_CHECKING:
    from core.loop.checkpoints import CheckpointStore
    from core.loop.models import LoopState

# what happened to the call, in the words of the one who asked
OUTCOME = {"pending": "waiting", "approved": "allowed", "rejected": "denied", "answered": "answered",
           "expired": "expired", "withdrawn": "withdrawn"}


def outcome(req: InboxRequest) -> str:
    return OUTCOME.get(req.status, req.status)


def loop_decided(store: "CheckpointStore", states: Iterable["LoopState"]) -> list[InboxRequest]:
    """Each decided request of these loops, as the inbox shows a decided one."""
    out: list[InboxRequest] = []
    for state in states:
        if not state.decisions:
            continue
        asked: dict[str, InboxRequest] = {}
        entries, _problems = store.history(state.loop_id)
        for e in entries:
            p = e.state.pending_approval
            if p is not None and p.request_id not in asked:
                req = from_pending(e.state)
                if req is not None:
                    asked[p.request_id] = req
        for d in state.decisions:
            if d.loop_id == state.loop_id:  # a fork's copied decisions belong to its parent
                out.append(decided(state, d.request_id, d, asked.get(d.request_id)))
    return out


def since_filter(items: list[InboxRequest], since: datetime | None) -> list[InboxRequest]:
    """The requests made, or decided, at or after ``since``."""
    if since is None:
        return items
    return [r for r in items if r.created_at >= since or (r.decision is not None and r.decision.decided_at >= since)]
