"""Waiting for files to appear, for any number of async callers, with no thread.

``request_approval`` (tui/agents/mcp_server.py) waits for its request's
decision file (``<state>/inbox/<id>.decision.json``, linked in whole by
whoever decides: core/inbox/store.py). Waiting in a worker thread made every
waiting call hold one of the thread tokens the server's other tools need, so
100 waiting calls queued ``recall`` for seconds. Here a waiting call is a task
parked on an ``anyio.Event``: it holds no thread and costs nothing per tick.

One of the waiting callers at a time polls for all of them, so no task group
has to outlive a request and nothing polls while nobody waits. Per tick it
stats each watched directory once; the waited-for names are stat'ed only when
a directory changed, when its mtime is too recent to be trusted (coarse
timestamps can hide a second change in the same tick), and every
``rescan_s`` regardless (file systems whose directory times lie). When the
polling caller leaves (its file appeared, its time ran out, it was
cancelled) it wakes another waiter, which takes over.
"""

from __future__ import annotations

import os
import time

import anyio

POLL_S = 0.05  # how soon a decision is seen; one directory stat per tick
RESCAN_S = 1.0
RACY_NS = 1_000_000_000  # a directory mtime younger than this may hide a change made in the same tick


def _dir_state(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None  # not there (yet): a change once it is
    return st.st_ino, st.st_mtime_ns


class FileWatch:
    def __init__(self, poll_s: float = POLL_S, rescan_s: float = RESCAN_S):
        self.poll_s = poll_s
        self.rescan_s = rescan_s
        self._waiting: dict[anyio.Event, str] = {}  # one event per parked caller -> the path it waits for
        self._polling = False

    @property
    def waiting(self) -> int:
        """How many callers are waiting now."""
        return len(self._waiting)

    async def wait(self, path: str | os.PathLike, timeout: float) -> bool:
        """True as soon as ``path`` exists, False once ``timeout`` seconds pass
        without it. Cancelling the caller ends the wait at once."""
        path = os.fspath(path)
        deadline = anyio.current_time() + max(0.0, float(timeout))
        while True:
            if os.path.exists(path):
                return True
            left = deadline - anyio.current_time()
            if left <= 0:
                return False
            woken = anyio.Event()  # set when path may exist, or when it is this caller's turn to poll
            self._waiting[woken] = path
            try:
                with anyio.move_on_after(left):
                    if self._polling:
                        await woken.wait()
                    else:
                        await self._poll_until(woken)
            finally:
                del self._waiting[woken]
                if not self._polling:
                    self._wake_one()  # whoever polled has left (or a woken caller did): hand over

    async def _poll_until(self, mine: anyio.Event) -> None:
        self._polling = True
        try:
            seen: dict[str, tuple[int, int] | None] = {}
            last_scan = anyio.current_time()
            while not mine.is_set():
                await anyio.sleep(self.poll_s)
                now = anyio.current_time()
                dirs = {os.path.dirname(p) for p in self._waiting.values()}
                state = {d: _dir_state(d) for d in dirs}
                wall = time.time_ns()
                racy = any(s is not None and wall - s[1] < RACY_NS for s in state.values())
                if state != seen or racy or now - last_scan >= self.rescan_s:
                    for event, p in list(self._waiting.items()):
                        if not event.is_set() and os.path.exists(p):
                            event.set()
                    last_scan = now
                seen = state
        finally:
            self._polling = False

    def _wake_one(self) -> None:
        for event in self._waiting:
            if not event.is_set():
                event.set()  # it looks at its file, then polls for everyone
                return
