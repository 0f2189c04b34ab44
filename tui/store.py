"""What the dashboard knows about the loops of its state directory.

Plain Python (no textual): the app's watcher thread feeds it, and each view
asks for what changed since it last drew, so a view redraws only the loops
whose version moved and removes only the rows that disappeared.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Iterable

from core.api import LoopState

ATTENTION = ("waiting_human", "blocked")


@dataclass
class Transition:
    loop_id: str
    old: str | None  # None: a loop seen for the first time
    new: str
    state: LoopState


@dataclass
class LoopStore:
    states: dict[str, LoopState] = field(default_factory=dict)
    versions: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    loaded: bool = False  # the first full listing has arrived
    generation: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    # -- writing (the UI thread, from the watcher's messages) -------------------------
    def replace_all(self, states: Iterable[LoopState], problems: list[str]) -> list[Transition]:
        fresh = {s.loop_id: s for s in states}
        gone = set(self.states) - set(fresh)
        out = self.apply(fresh.values(), gone)
        self.problems = list(problems)
        self.loaded = True
        return out

    def apply(self, states: Iterable[LoopState], gone: Iterable[str] = ()) -> list[Transition]:
        """Take new states (and removals); returns the status changes."""
        out: list[Transition] = []
        with self._lock:
            for s in states:
                old = self.states.get(s.loop_id)
                if old is not None and old.seq == s.seq and old.updated_at == s.updated_at \
                        and old.status == s.status:
                    continue
                self.states[s.loop_id] = s
                self.versions[s.loop_id] = self.versions.get(s.loop_id, 0) + 1
                if old is None or old.status != s.status:
                    out.append(Transition(s.loop_id, old.status if old else None, s.status, s))
            for loop_id in gone:
                if self.states.pop(loop_id, None) is not None:
                    self.versions.pop(loop_id, None)
            self.generation += 1
        return out

    def touch(self, loop_ids: Iterable[str]) -> None:
        """Mark loops changed though their state did not move (a process started or stopped
        running one: its row says running or paused)."""
        with self._lock:
            for loop_id in loop_ids:
                if loop_id in self.versions:
                    self.versions[loop_id] += 1
            self.generation += 1

    # -- reading ------------------------------------------------------------------------
    def changed_since(self, seen: dict[str, int]) -> tuple[list[str], list[str]]:
        """(loop ids new or changed since ``seen``, ids in ``seen`` now gone)."""
        changed = [i for i, v in self.versions.items() if seen.get(i) != v]
        gone = [i for i in seen if i not in self.versions]
        return changed, gone

    def ordered(self) -> list[LoopState]:
        """Newest first (by last change), like ``ars loop list``."""
        return sorted(self.states.values(), key=lambda s: s.updated_at, reverse=True)

    def attention(self) -> list[LoopState]:
        """Loops waiting for a person: requests and blockers, oldest request first."""
        waiting = [s for s in self.states.values() if s.status in ATTENTION]
        return sorted(waiting, key=lambda s: (s.pending_approval.created_at if s.pending_approval
                                              else s.updated_at))

    @property
    def inbox_count(self) -> int:
        return sum(1 for s in self.states.values() if s.status in ATTENTION)

    def goals(self) -> dict[str, list[LoopState]]:
        """Loops grouped by goal id (goals sorted by name, loops oldest first)."""
        out: dict[str, list[LoopState]] = {}
        for s in sorted(self.states.values(), key=lambda s: s.created_at):
            out.setdefault(s.goal_id, []).append(s)
        return dict(sorted(out.items(), key=lambda kv: kv[0].casefold()))
