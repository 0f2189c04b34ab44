"""Garbage collection while nobody is typing.

The dashboard holds a few hundred thousand long-lived objects: loop states,
history entries, and Textual's render caches (every cached line of text is a
Strip with seven small caches of its own). CPython's full (generation 2)
collection walks all of them, and the allocations a key makes (a diff, a
table redraw) trigger one every second or two: 50-130 ms on this machine's
busy cores, under whatever key was being answered (the tail of every key's
latency on a large state).

``IdleCollector`` moves that work to when no key or mouse event has come for
``IDLE_S``: it collects what is garbage now and freezes the survivors
(``gc.freeze``), so the automatic collections that run under keys only walk
what was made since. Frozen objects are still freed by reference counting;
only cyclic garbage among them (e.g. widgets removed after the freeze) waits,
until a full pass (unfreeze, collect, freeze) every ``FULL_EVERY_S``, also
only when idle.

While keys come, the automatic full collections are also made rarer
(``TYPING_GEN2``). Textual's rendered lines reference themselves through their
own caches (a crop that changes nothing caches the line itself), so each
redraw leaves a few thousand objects that only the cyclic collector frees;
those that lived long enough to reach the oldest generation made a full pass
(20-50 ms) due every three or four table redraws. The pause then sweeps them.
"""

from __future__ import annotations

import gc
import time

IDLE_S = 1.5  # no input for this long: a collection now stalls no key being answered
EVERY_S = 10.0  # collect and freeze at most this often
FULL_EVERY_S = 600.0  # and look at the frozen objects again this often (cyclic garbage among them)
MIN_NEW = 20_000  # objects tracked since the last freeze below which there is nothing worth doing
# while typing: a full collection after this many middle-generation ones (CPython's default: 10);
# still bounded, so a key held down for minutes does not grow the heap without end
TYPING_GEN2 = 100


class IdleCollector:
    def __init__(self, clock=time.monotonic) -> None:
        self.clock = clock
        now = clock()
        self.last_input = now
        self.last_collect = now
        self.last_full = now
        self.collections = 0  # how many idle collections ran (tests read it)
        self.typing_thresholds: tuple[int, int, int] | None = None  # the thresholds to go back to

    def input_seen(self) -> None:
        self.last_input = self.clock()
        if self.typing_thresholds is None:
            t0, t1, t2 = self.typing_thresholds = gc.get_threshold()
            gc.set_threshold(t0, t1, max(t2, TYPING_GEN2))

    def typing_over(self) -> None:
        """The usual thresholds again (the pause came, or the app is closing)."""
        if self.typing_thresholds is not None:
            gc.set_threshold(*self.typing_thresholds)
            self.typing_thresholds = None

    def freeze_now(self, full: bool = False) -> None:
        """Collect and freeze (after a load made many long-lived objects)."""
        if full:
            gc.unfreeze()
            self.last_full = self.clock()
        gc.collect()
        gc.freeze()
        self.last_collect = self.clock()
        self.collections += 1

    def freeze_new(self) -> None:
        """Freeze what is tracked now without collecting first (no pause): called when a
        view has just made many objects it keeps (a loop's history). Cyclic garbage
        frozen with them waits for the next full pass."""
        gc.freeze()

    def tick(self) -> bool:
        """Called on a timer: collect if nobody is typing and it is due. True if it ran."""
        now = self.clock()
        if now - self.last_input < IDLE_S:
            return False
        self.typing_over()
        if now - self.last_collect < EVERY_S:
            return False
        full = now - self.last_full >= FULL_EVERY_S
        if not full and len(gc.get_objects()) < MIN_NEW:
            self.last_collect = now
            return False
        self.freeze_now(full=full)
        return True
