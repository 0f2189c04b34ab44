"""A capture's checkpoint: ``<state>/capture/<name>.json``, and its lock.

What the next capture of a transcript or session carries on from (core/capture).
Written atomically (0600) after the episodes it led to are durable: a capture
killed in between reads the older checkpoint again and rebuilds the same parts
(same ids, same text), so nothing is lost or doubled. Two captures of one
transcript at once (a tool's PostToolUse beside the turn's Stop) take turns on
``<name>.lock``; captures of different sessions never wait for each other.
A checkpoint that cannot be read is started over (the reading from the start
rebuilds the same ids). No secret rests in one: its strings are redacted as it is written.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from core.infra.fsutil import PRIVATE_FILE, atomic_write, private_dir

FOLDER = "capture"


class CaptureBusy(RuntimeError):
    """Another capture of the same transcript or session held it past the wait."""


def name_for(kind: str, key: str) -> str:
    """A file name for ``key`` (a path, a session id: any text) that says nothing of it."""
    return f"{kind}-{hashlib.sha256(key.encode('utf-8', 'surrogatepass')).hexdigest()[:32]}"


class Checkpoint:
    def __init__(self, state_dir: Path, name: str):
        self.folder = Path(state_dir) / FOLDER
        self.path = self.folder / f"{name}.json"

    def load(self) -> dict | None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            return None
        return data if isinstance(data, dict) else None

    def save(self, data: dict) -> None:
        """Written with every string's secrets redacted (sizes are numbers: they stay exact)."""
        from core.govern.redact import redact_value

        private_dir(self.folder)
        atomic_write(self.path, json.dumps(redact_value(data), ensure_ascii=False, separators=(",", ":")))

    @contextmanager
    def held(self, wait: float) -> Iterator["Checkpoint"]:
        """This checkpoint to oneself for the block (``CaptureBusy`` after ``wait`` seconds)."""
        private_dir(self.folder)
        fd = os.open(self.path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT, PRIVATE_FILE)
        try:
            deadline = time.monotonic() + wait
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise CaptureBusy(f"another capture of {self.path.name} is still running after "
                                          f"{wait:g} s") from None
                    time.sleep(0.01)
            yield self
        finally:
            os.close(fd)  # closing the descriptor releases the flock


def for_transcript(state_dir: str | os.PathLike, path: str | os.PathLike) -> Checkpoint:
    """The checkpoint of the transcript at ``path`` (named by its absolute path)."""
    return Checkpoint(Path(state_dir), name_for("transcript", os.path.abspath(os.path.expanduser(os.fspath(path)))))


def checkpoint_age(state_dir: str | os.PathLike, transcript: str | os.PathLike, *, starting: bool = False) -> float | None:
    """Seconds since the transcript was last captured, or a capture of it was started; None:
    never (two stats, for a hook). ``starting``: a capture is being started now (the next
    caller sees age 0 and starts none)."""
    cp = for_transcript(state_dir, transcript)
    lock = cp.path.with_suffix(".lock")
    times = []
    for p in (cp.path, lock):
        try:
            times.append(os.stat(p).st_mtime)
        except OSError:
            pass
    if starting:
        try:
            private_dir(cp.folder)
            os.close(os.open(lock, os.O_WRONLY | os.O_CREAT, PRIVATE_FILE))
            os.utime(lock)
        except OSError:
            pass
    return max(0.0, time.time() - max(times)) if times else None


def forget(state_dir: str | os.PathLike, ids: set[str]) -> int:
    """``ars forget``: no checkpoint keeps the text of a forgotten episode. A transcript's is
    removed (the next capture reads the file from its start, the ids the ingest gives, and the
    tombstone keeps the forgotten ones out); a session's handed-over turns keep their part
    counter and lose the open part's messages. Returns how many files changed."""
    folder = Path(state_dir) / FOLDER
    n = 0
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        builders = list(((data.get("reader") or {}).get("builders") or {}).values()) if "reader" in data \
            else [data.get("builder")]
        hit = [b for b in builders if isinstance(b, dict) and isinstance(b.get("open"), dict)
               and f"{b.get('source')}:{b.get('session_id')}:{b['open'].get('index')}" in ids]
        if not hit:
            continue
        if "reader" in data:
            path.unlink(missing_ok=True)
        else:
            for b in hit:
                b["open"] = None
            atomic_write(path, json.dumps(data, ensure_ascii=False, separators=(",", ":")))
        n += 1
    return n
