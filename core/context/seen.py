"""Which memories a session was already given: never the same one twice in a session.

One small append-only file per session under ``<state>/context/``: one episode id a line.
Appends of a line are atomic, so two turns of one session racing lose nothing; the
file is a cache of the receipts in the ledger (the record), so it is not fsync'd. Files of
sessions idle for ``KEEP_DAYS`` are removed now and then.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from pathlib import Path
from typing import Iterable

from core.infra.fsutil import PRIVATE_FILE, private_dir

DIR = "context"
KEEP_DAYS = 30
MAX_READ = 1 << 20  # bytes of a seen file read (a session of thousands of turns)
_SAFE_RE = re.compile(r"[^\w.-]+")


def path_of(state_dir: Path, session: str) -> Path:
    """The session's file: a readable, safe part of its id and a hash of all of it."""
    digest = hashlib.blake2b(session.encode("utf-8", "replace"), digest_size=6).hexdigest()
    safe = _SAFE_RE.sub("_", session)[:60].strip("._") or "session"
    return Path(state_dir) / DIR / f"{safe}-{digest}.seen"


def given(state_dir: Path, session: str | None) -> set[str]:
    """Episode ids given earlier in ``session`` (none without a session or a file)."""
    if not session:
        return set()
    try:
        with open(path_of(state_dir, session), "rb") as fh:
            raw = fh.read(MAX_READ)
    except OSError:
        return set()
    return {line for line in raw.decode("utf-8", "replace").splitlines() if line}


def add(state_dir: Path, session: str | None, episode_ids: Iterable[str]) -> None:
    """Remember that ``session`` was given these episodes (OSError when it cannot be written)."""
    ids = [i for i in episode_ids if i and "\n" not in i]
    if not session or not ids:
        return
    path = path_of(state_dir, session)
    if not path.parent.is_dir():
        private_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, PRIVATE_FILE)
    try:
        os.write(fd, "".join(f"{i}\n" for i in ids).encode("utf-8", "replace"))
    finally:
        os.close(fd)
    if int.from_bytes(os.urandom(1), "big") < 3:  # about one write in 85: sweep old sessions' files
        sweep(path.parent)


def sweep(folder: Path, keep_days: float = KEEP_DAYS) -> int:
    """Remove seen files untouched for ``keep_days``; how many went."""
    cutoff = time.time() - keep_days * 86400
    gone = 0
    try:
        for p in folder.glob("*.seen"):
            try:
                if p.stat().st_mtime < cutoff:
                    p.unlink()
                    gone += 1
            except OSError:
                continue
    except OSError:
        pass
    return gone
