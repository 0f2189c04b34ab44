"""How the Loops table orders and filters loops: the sort keys ``s`` cycles through, and
which loops a filter text and "waiting only" (``w``) keep."""

from __future__ import annotations

from core.api import LoopState

STATUS_ORDER = {"waiting_human": 0, "blocked": 1, "active": 2, "initialized": 3, "aborted": 4, "done": 5}
# sort keys (s cycles them): name, how a loop sorts, and whether newest/most urgent first is the natural order
SORTS: tuple[tuple[str, str], ...] = (("updated", "age"), ("status", "status"), ("goal", "goal"),
                                      ("loop", "loop"), ("iteration", "iter"))
NEEDS_YOU = ("waiting_human", "blocked")


def sort_key(name: str):
    if name == "updated":
        return lambda s: s.updated_at.timestamp()
    if name == "status":
        return lambda s: (STATUS_ORDER.get(s.status, 9), -s.updated_at.timestamp())
    if name == "goal":
        return lambda s: ((s.goal.name or s.goal_id).casefold(), -s.updated_at.timestamp())
    if name == "iteration":
        return lambda s: (s.iteration, s.updated_at.timestamp())
    return lambda s: s.loop_id


def matches(s: LoopState, text: str, needs_you: bool) -> bool:
    """Whether the loop passes "waiting only" and holds every word of ``text``."""
    if needs_you and s.status not in NEEDS_YOU:
        return False
    if not text:
        return True
    hay = f"{s.loop_id} {s.goal_id} {s.goal.name} {s.status} {s.current_step}".casefold()
    return all(w in hay for w in text.casefold().split())
