"""A SQLite write that ran out of space, told as a full disk.

SQLite says "database or disk is full" only when ENOSPC hits the main file; when
it hits the WAL or the ``-shm`` map it says "disk I/O error" (SQLITE_IOERR_WRITE,
_SHMSIZE...), and Python's sqlite3 does not expose ``sqlite3_system_errno``. So
the file system is asked instead: an I/O error on a file system with almost no
space left is a full disk, and the person gets the disk-full line (free space,
run again, nothing acknowledged is lost) rather than a bare "disk I/O error".
"""
from __future__ import annotations

import errno
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

# Below this much free space an I/O error is read as the disk being full: SQLite
# grows the WAL a few pages at a time, so a write fails with far more than 0 bytes left.
NEARLY_FULL = 1 << 20


def free_bytes(directory: Path) -> int | None:
    try:
        st = os.statvfs(directory)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def as_disk_full(exc: BaseException, directory: Path) -> OSError | None:
    """An ``OSError(ENOSPC)`` naming ``directory`` when ``exc`` is SQLite's I/O
    error on a file system that is (nearly) full; else None."""
    text = str(exc)
    if "disk I/O error" not in text and "full" not in text:
        return None
    free = free_bytes(directory)
    if free is None or free >= NEARLY_FULL:
        return None
    return OSError(errno.ENOSPC, f"No space left on device ({text})", str(directory))


@contextmanager
def told_as_disk_full(directory: Path, errors: tuple[type[BaseException], ...]) -> Iterator[None]:
    """Raise ``errors`` of the block as they are, unless they are a full disk under
    ``directory``: then as the ``OSError(ENOSPC)`` of ``as_disk_full``."""
    try:
        yield
    except errors as exc:
        full = as_disk_full(exc, directory)
        if full is not None:
            raise full from exc
        raise
