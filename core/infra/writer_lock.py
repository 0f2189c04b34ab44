"""One writer at a time per state directory.

The ledger append is atomic on its own (``flock`` in ``Ledger.append``), but a
write is more than the append: ingest decides what changed by reading SQLite
and the source registry, appends, applies to SQLite, then registers the files
for the raw tier. Two writers interleaving those steps collided (a UNIQUE
failure in SQLite, and a registry compaction that dropped the other writer's
files). So every writer holds ``state/.writer.lock`` for its whole write:
an exclusive ``flock`` (released by the kernel when a process dies, so a
killed writer never leaves the directory locked).

The lock is re-entrant within a process (``ingest`` holds it and calls
``Memory.store``, which takes it too): ``flock`` locks belong to an open file,
so a second open in the same process would wait on itself. Readers (recall,
the dashboard) never take it.
"""

from __future__ import annotations

import fcntl
import os
import sys
import threading
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator

from core.infra.fsutil import PRIVATE_FILE
from core.infra.timed_flock import flock_timed

LOCK_NAME = ".writer.lock"


class WriterBusy(Exception):
    """Another process is writing to this state directory (non-blocking try)."""


class _Held:
    """This process's hold on one state directory's lock."""

    def __init__(self) -> None:
        self.guard = threading.RLock()  # threads of this process queue here
        self.depth = 0
        self.fd: int | None = None


_held: dict[str, _Held] = {}
_held_guard = threading.Lock()


def _entry(path: Path) -> _Held:
    key = str(path.resolve())
    with _held_guard:
        return _held.setdefault(key, _Held())


def holder(state_dir: Path) -> str:
    """Who holds the lock, as its holder wrote it ("pid 123: ars ingest, since ...")."""
    try:
        return (Path(state_dir) / LOCK_NAME).read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""


def _describe(who: str) -> str:
    since = datetime.now(timezone.utc).strftime("%H:%M:%S UTC")
    return f"pid {os.getpid()}: {who}, since {since}"


@contextmanager
def writer_lock(state_dir: Path, who: str = "", *, blocking: bool = True,
                on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
    """Hold the state directory's writer lock for the block.

    ``blocking=False`` raises ``WriterBusy`` instead of waiting. When the lock
    is busy and ``blocking``, ``on_wait`` is told once who holds it (the CLI
    prints it, so a second ``ars ingest`` says why it is waiting)."""
    path = Path(state_dir) / LOCK_NAME
    held = _entry(path)
    if not held.guard.acquire(blocking=blocking):
        raise WriterBusy(f"another thread of this process is writing to {state_dir}")
    try:
        if held.depth == 0:
            held.fd = _acquire(path, who or " ".join(sys.argv[:2]) or "ars", blocking, on_wait)
        held.depth += 1
        try:
            yield
        finally:
            held.depth -= 1
            if held.depth == 0 and held.fd is not None:
                fd, held.fd = held.fd, None
                fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)
    finally:
        held.guard.release()


def _acquire(path: Path, who: str, blocking: bool, on_wait: Callable[[str], None] | None) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, PRIVATE_FILE)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            other = holder(path.parent) or "another ars process"
            if not blocking:
                raise WriterBusy(f"{path.parent} is being written by {other}") from None
            if on_wait is not None:
                on_wait(f"waiting for {other} to finish writing to {path.parent}")
            t0 = time.monotonic()
            flock_timed(fd, path, default=86_400.0)  # an ingest may write for long; a hook sets ARS_LOCK_WAIT
            if on_wait is not None:
                on_wait(f"got the writer lock after {time.monotonic() - t0:.1f} s")
        # who holds it, for the next one who has to wait
        os.ftruncate(fd, 0)
        os.pwrite(fd, (_describe(who) + "\n").encode("utf-8", "replace"), 0)
        return fd
    except BaseException:
        os.close(fd)
        raise
