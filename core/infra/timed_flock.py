"""Every wait on a file lock is timed: ``flock_timed`` instead of a blocking ``flock``.

A same-user agent can hold any lock ARS takes (``flock <state>/.ledger.lock sleep 1e9``).
A blocking ``flock`` would then hang a hook until its agent kills it, and a killed hook is
an allowed call for Claude Code and Hermes. So each wait gives up after ``lock_wait()``
seconds with ``LockBusy`` (one line naming the lock and the fix), which the hooks turn into
a refusal. ``ARS_LOCK_WAIT`` sets it (the hooks set a few seconds); otherwise each lock has
its default: 30 s for the ledger (far above an append's fsync), a day for the writer lock (a
second ``ars ingest`` waits for the first, saying so).
"""

from __future__ import annotations

import fcntl
import os
import time

DEFAULT_WAIT = 30.0  # seconds


class LockBusy(OSError):
    """A lock stayed held past the wait (another process, or one holding it on purpose)."""


def lock_wait(default: float = DEFAULT_WAIT) -> float:
    """``ARS_LOCK_WAIT`` when set (a hook sets it), else ``default``."""
    try:
        value = float(os.environ.get("ARS_LOCK_WAIT", default))
    except ValueError:
        return default
    return value if value > 0 else default


def flock_timed(fd: int, path: object, default: float = DEFAULT_WAIT) -> None:
    """``flock(fd, LOCK_EX)``, polling without blocking for ``lock_wait(default)`` seconds."""
    wait = lock_wait(default)
    deadline = time.monotonic() + wait
    pause = 0.005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            left = deadline - time.monotonic()
            if left <= 0:
                raise LockBusy(f"the lock {path} has been held by another process for {wait:g} s: find it with "
                               f"`fuser -v {path}` and let it finish (or stop it)") from None
            time.sleep(min(pause, left))
            pause = min(pause * 2, 0.05)
