"""Decided exactly once: the exclusive create both decision stores use.

A decision file is written complete to a private temp file, fsync'd, then
``link(2)``-ed to its final name. ``link`` fails with EEXIST when the name
exists (atomic on POSIX file systems, across processes), so of any number of
processes deciding the same request at once exactly one creates the file;
and a reader never sees a half-written decision (the name appears only when
the content is whole). Used by ``core.loop.decisions`` (a loop's pending
request) and ``core.inbox`` (agents' requests). Stdlib only.
"""

from __future__ import annotations

import getpass
import os
import socket
import uuid
from pathlib import Path

from core.errors import BadQuery
from core.infra.fsutil import PRIVATE_FILE, fsync_dir, private_dir


class AlreadyDecided(BadQuery):
    """A second decision on a request that already has one; the message says
    who decided what and when. One class for loops' and agents' requests."""


def who() -> str:
    """Who decides: ``user@host:pid``."""
    try:
        user = getpass.getuser()
    except Exception:  # noqa: BLE001 - no login name in some containers
        user = "unknown"
    return f"{user}@{socket.gethostname()}:{os.getpid()}"


def create_once(path: Path, data: bytes) -> bool:
    """Create ``path`` (0600) holding ``data``, exactly once across processes.

    True when this call created it; False when the name already existed (someone
    decided first; nothing was written over it)."""
    path = Path(path)
    private_dir(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, path)  # fails with EEXIST if anyone decided first: the exclusive create
        except FileExistsError:
            return False
        fsync_dir(path.parent)
        return True
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
