"""The write-ahead ledger: ``ledger.jsonl``, the only write that acknowledges.

Every change to memory or to a loop is first an event appended here and
fsync'd; the stores (SQLite at once, Neo4j through the sync worker) are
derived from it and can be rebuilt from it. Rules (DESIGN.md, State directory):

* one JSON object a line, each with a stable ``event_id`` so replays are
  idempotent (the same content always yields the same id);
* ``append`` writes a whole batch and fsyncs once (group commit): the batch
  is acknowledged together when it returns;
* a torn last line (a crash mid-write) is ignored on read and truncated by the
  next append, so it is never glued to a new record;
* appends from several processes are serialised with ``flock``.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

LEDGER = "ledger.jsonl"


def content_id(kind: str, *parts: Any) -> str:
    """A stable event id: the same kind and content give the same id."""
    h = hashlib.blake2b(digest_size=12)
    for p in parts:
        h.update(json.dumps(p, sort_keys=True, ensure_ascii=False, default=str).encode())
        h.update(b"\x1f")
    return f"{kind}:{h.hexdigest()}"


@dataclass(frozen=True)
class Event:
    event_id: str
    type: str  # e.g. episode.upsert, loop.transition, human.decision
    data: dict[str, Any]
    ts: str = ""

    def line(self) -> str:
        ts = self.ts or datetime.now(timezone.utc).isoformat()
        return json.dumps({"event_id": self.event_id, "type": self.type, "ts": ts, "data": self.data},
                          ensure_ascii=False, default=str)


@dataclass(frozen=True)
class Entry:
    """An event read back, with the byte offsets of its line."""

    offset: int  # where the line starts
    end: int  # where the next line starts (a cursor after this event)
    event_id: str
    type: str
    ts: str
    data: dict[str, Any]


class Ledger:
    def __init__(self, state_dir: Path):
        self.path = Path(state_dir) / LEDGER
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock_path = Path(state_dir) / ".ledger.lock"

    @contextmanager
    def _locked(self):
        with open(self._lock_path, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def append(self, events: list[Event]) -> tuple[int, int]:
        """Append events durably; returns the (start, end) byte range written.

        When this returns, every event in the batch is on disk (fsync'd).
        """
        if not events:
            size = self.size()
            return size, size
        payload = "".join(e.line() + "\n" for e in events).encode("utf-8")
        with self._locked():
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                end = _good_end(fd)
                if end != os.fstat(fd).st_size:
                    os.ftruncate(fd, end)  # drop a torn tail left by a crash
                os.lseek(fd, end, os.SEEK_SET)
                view = memoryview(payload)
                while view:
                    n = os.write(fd, view)
                    view = view[n:]
                os.fsync(fd)
            finally:
                os.close(fd)
        return end, end + len(payload)

    def size(self) -> int:
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return 0

    def read(self, start: int = 0, *, types: tuple[str, ...] | None = None) -> Iterator[Entry]:
        """Events from byte ``start`` on. A torn or corrupt last line is skipped;
        a corrupt line in the middle (never written by ``append``) is skipped too."""
        try:
            fh = open(self.path, "rb")
        except FileNotFoundError:
            return
        with fh:
            fh.seek(start)
            offset = start
            for raw in fh:
                end = offset + len(raw)
                if raw.endswith(b"\n"):
                    try:
                        d = json.loads(raw)
                    except ValueError:
                        d = None
                    if isinstance(d, dict) and "event_id" in d and (types is None or d.get("type") in types):
                        yield Entry(offset, end, d["event_id"], d.get("type", ""), d.get("ts", ""), d.get("data") or {})
                offset = end

    def check(self) -> dict[str, int]:
        """Counts of good, torn and corrupt lines (for doctor and the crash test)."""
        good = corrupt = torn = 0
        try:
            with open(self.path, "rb") as fh:
                for raw in fh:
                    if not raw.endswith(b"\n"):
                        torn += 1
                        continue
                    try:
                        ok = "event_id" in json.loads(raw)
                    except (ValueError, TypeError):
                        ok = False
                    good += ok
                    corrupt += not ok
        except FileNotFoundError:
            pass
        return {"events": good, "corrupt": corrupt, "torn_tail": torn}


def _good_end(fd: int) -> int:
    """Byte length of the file up to and including its last newline."""
    size = os.fstat(fd).st_size
    if size == 0:
        return 0
    pos = size
    block = 65536
    while pos > 0:
        start = max(0, pos - block)
        chunk = os.pread(fd, pos - start, start)
        i = chunk.rfind(b"\n")
        if i >= 0:
            return start + i + 1
        pos = start
    return 0
