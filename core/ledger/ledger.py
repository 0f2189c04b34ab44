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
from typing import Any, Callable, Iterator

from core.infra.fsutil import PRIVATE_FILE, private_dir
from core.infra.timed_flock import flock_timed

LEDGER = "ledger.jsonl"


class LedgerUnreadable(OSError):
    """The ledger path exists but is not a readable file (a directory, no permission)."""


@dataclass(frozen=True)
class BadEvent:
    """A ledger line that was skipped: where it is and what is wrong with it."""

    offset: int
    line: int  # 1-based line number in ledger.jsonl
    error: str

    def describe(self, path: Path) -> str:
        return f"{path.name}:{self.line}: {self.error}"


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

    def line(self, ns: str = "") -> str:
        ts = self.ts or datetime.now(timezone.utc).isoformat()
        d = {"event_id": self.event_id, "type": self.type, "ts": ts, "data": self.data}
        if ns:
            d["ns"] = ns  # the namespace (core/team/identity.py); absent: written before namespaces, "default"
        return json.dumps(d, ensure_ascii=False, default=str)


@dataclass(frozen=True)
class Entry:
    """An event read back, with the byte offsets of its line."""

    offset: int  # where the line starts
    end: int  # where the next line starts (a cursor after this event)
    event_id: str
    type: str
    ts: str
    data: dict[str, Any]
    ns: str = "default"  # the namespace the event was written in


class Ledger:
    def __init__(self, state_dir: Path, namespace: str | None = None):
        self.path = Path(state_dir) / LEDGER
        if namespace is None:
            from core.team.identity import recorded_namespace

            namespace = recorded_namespace(Path(state_dir))
        self.namespace = namespace
        if not self.path.parent.is_dir():
            private_dir(self.path.parent)
        self._lock_path = Path(state_dir) / ".ledger.lock"

    @contextmanager
    def _locked(self):
        fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, PRIVATE_FILE)
        try:
            flock_timed(fd, self._lock_path)  # timed: an agent holding the lock must not hang a hook
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def _check_file(self) -> None:
        if self.path.exists() and not self.path.is_file():
            raise LedgerUnreadable(
                f"{self.path} is not a file: move it aside (mv {self.path} {self.path}.bad) "
                "and restore the ledger from a backup, or start a new state directory")

    def append(self, events: list[Event]) -> tuple[int, int]:
        """Append events durably; returns the (start, end) byte range written.

        When this returns, every event in the batch is on disk (fsync'd).
        """
        starts, end = self.append_each(events)
        return (starts[0] if starts else end), end

    def append_each(self, events: list[Event]) -> tuple[list[int], int]:
        """``append``, returning where each event's line starts, and the end."""
        if not events:
            return [], self.size()
        lines = [(e.line(self.namespace) + "\n").encode("utf-8") for e in events]
        payload = b"".join(lines)
        self._check_file()
        with self._locked():
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, PRIVATE_FILE)
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
        starts, at = [], end
        for line in lines:
            starts.append(at)
            at += len(line)
        return starts, at

    def patch(self, patches: list[tuple[int, bytes]]) -> int:
        """Overwrite whole lines in place, each with a replacement of exactly
        its length (``core/govern/scrub.py``: a forgotten episode's line loses
        its text, every offset after it stays valid). A patch that does not
        cover exactly one line is refused before anything is written."""
        if not patches:
            return 0
        self._check_file()
        with self._locked():
            fd = os.open(self.path, os.O_RDWR)
            try:
                for off, new in patches:
                    old = os.pread(fd, len(new), off)
                    if len(old) != len(new) or not old.endswith(b"\n") or b"\n" in old[:-1] \
                            or (off > 0 and os.pread(fd, 1, off - 1) != b"\n"):
                        raise ValueError(f"{self.path.name}: a patch at byte {off} is not one whole line")
                for off, new in patches:
                    os.pwrite(fd, new, off)
                os.fsync(fd)
            finally:
                os.close(fd)
        return len(patches)

    def size(self) -> int:
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return 0

    def read(self, start: int = 0, *, types: tuple[str, ...] | None = None,
             on_bad: Callable[[BadEvent], None] | None = None) -> Iterator[Entry]:
        """Events from byte ``start`` on. A torn last line is skipped (a crash
        mid-append); a corrupt line in the middle (never written by ``append``:
        an edit, a disk error) is skipped too and, with ``on_bad``, reported."""
        self._check_file()
        try:
            fh = open(self.path, "rb")
        except FileNotFoundError:
            return
        except OSError as exc:
            raise LedgerUnreadable(f"cannot read {self.path}: {exc.strerror or exc}") from None
        with fh:
            fh.seek(start)
            offset = start
            for raw in fh:
                end = offset + len(raw)
                if raw.endswith(b"\n"):
                    try:
                        d = json.loads(raw)
                        problem = _shape_error(d)
                    except (ValueError, RecursionError) as exc:
                        d, problem = None, f"not JSON ({' '.join(str(exc).split())[:80]})"
                    if problem:
                        if on_bad is not None and raw.strip():
                            on_bad(BadEvent(offset, self.line_of(offset), problem))
                    elif types is None or d.get("type") in types:
                        yield Entry(offset, end, d["event_id"], d.get("type", ""), d.get("ts", ""), d.get("data") or {},
                                    d.get("ns") or "default")
                offset = end

    def line_of(self, offset: int) -> int:
        """The 1-based line number of the line starting at byte ``offset``
        (counted only when a problem is reported)."""
        count = 0
        with open(self.path, "rb") as fh:
            left = offset
            while left > 0:
                chunk = fh.read(min(left, 1 << 20))
                if not chunk:
                    break
                count += chunk.count(b"\n")
                left -= len(chunk)
        return count + 1

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
                        ok = not _shape_error(json.loads(raw))
                    except (ValueError, RecursionError):
                        ok = False
                    good += ok
                    corrupt += not ok
        except FileNotFoundError:
            pass
        return {"events": good, "corrupt": corrupt, "torn_tail": torn}


def _shape_error(d: Any) -> str:
    """What is wrong with a decoded line as a ledger event ('' when nothing)."""
    if not isinstance(d, dict):
        return f"not an event object (a JSON {type(d).__name__})"
    if not isinstance(d.get("event_id"), str) or not d["event_id"]:
        return "no event_id"
    if not isinstance(d.get("data", {}), (dict, type(None))):
        return "data is not an object"
    return ""


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
