"""Which source files hold which episodes: what the raw-file tier scans.

Ingestion records, per file, the line spans of its episodes
(``[first_line, last_line, episode_id]``, 1-based, inclusive) in
``sources.jsonl`` in the state directory. The raw tier needs nothing else: no
database, no server, only this list and the files themselves. A file
registered twice keeps its latest entry.

Source files are read only when they are regular files (``open_regular``):
a FIFO or a device put where a transcript was would block a reader forever.
"""

from __future__ import annotations

import bisect
import json
import os
import stat
import threading
from array import array
from itertools import pairwise
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import BinaryIO

from core.infra.fsutil import append_line, atomic_write


class NotRegularFile(OSError):
    """A FIFO, device, socket or directory where a file was expected."""


_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"))


def not_regular(mode: int) -> str | None:
    """Why a file of this ``st_mode`` is not read (one line), or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    kind = next((name for test, name in _KINDS if test(mode)), "a special file")
    return f"not a regular file ({kind}): only regular files are read; copy its contents to a file to ingest them"


def open_regular(path: str | Path) -> BinaryIO:
    """Open a regular file for reading, or raise ``NotRegularFile``.

    Opened with O_NONBLOCK, so a FIFO with no writer cannot hang the open, and
    checked with fstat on the opened descriptor, not stat on the path: a
    check of the path could pass and the path be swapped for a FIFO before
    the open. Reads are blocking again once the file is known regular."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags)
    try:
        problem = not_regular(os.fstat(fd).st_mode)
        if problem:
            raise NotRegularFile(problem)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _registry_line(entry: dict) -> str:
    """One registry line. A path that is not valid UTF-8 (its bytes kept as
    lone surrogates by surrogateescape) cannot be written as UTF-8 text: that
    line is written ASCII-escaped (``\\udcff``), which reads back as the same
    path, so the raw tier can still open the file."""
    text = json.dumps(entry, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(entry)
    return text


class PackedIds(Sequence):
    """Episode ids as one string and the offsets where each starts. A million ids as a list of
    str held ~67 MB, and the list's strings, made while the registry's line was parsed, were
    interleaved with that parse's garbage, so the allocator kept ~270 MB of a warm process
    (bench/scale.py at 1,000,000). Packed, they are two allocations and the garbage goes back."""

    def __init__(self, ids: Iterable[str]):
        ids = list(ids)
        self._text = "".join(ids)
        self._at = array("q", [0]) * (len(ids) + 1)
        at = 0
        for i, one in enumerate(ids):
            at += len(one)
            self._at[i + 1] = at

    def __len__(self) -> int:
        return len(self._at) - 1

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self._text[self._at[i]:self._at[i + 1]]


class Spans(Sequence):
    """A file's spans as ``(first_line, last_line, episode_id)`` tuples, made on
    demand from three flat columns: a year of one agent's transcripts is a
    million spans, which as tuples held ~310 MB in every warm process (the
    files tier reads the registry once); as columns, the ids and 16 bytes a span."""

    def __init__(self, starts: array, ends: array, ids: Iterable[str]):
        self._starts, self._ends, self._ids = starts, ends, PackedIds(ids)

    def __len__(self) -> int:
        return len(self._ids)

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return self._starts[i], self._ends[i], self._ids[i]

    def __iter__(self):
        return zip(self._starts, self._ends, self._ids)


class SourceFile:
    def __init__(self, path: str, format: str, spans: Iterable[Sequence] = (), signature: list[int] | None = None):
        self.path = path
        self.format = format
        self.signature = list(signature or [])  # [size, mtime_ns] when ingested
        starts, ends, ids = array("q"), array("q"), []
        for a, b, c in spans:
            starts.append(int(a))
            ends.append(int(b))
            ids.append(str(c))
        # ingestion writes spans in line order: sort only a registry that is not (a million
        # (start, end, id) tuples made to sort them were ~100 MB of a warm process's peak)
        if any(a > b for a, b in pairwise(zip(starts, ends, ids))):
            order = sorted(range(len(ids)), key=lambda i: (starts[i], ends[i], ids[i]))
            starts, ends, ids = array("q", (starts[i] for i in order)), array("q", (ends[i] for i in order)), \
                [ids[i] for i in order]
        self._starts, self._ends = starts, ends
        self.spans = Spans(starts, ends, ids)

    def __repr__(self) -> str:
        return f"SourceFile({self.path!r}, {self.format!r}, {len(self.spans)} spans)"

    def episode_at(self, line: int) -> str | None:
        i = bisect.bisect_right(self._starts, line) - 1
        if i >= 0 and self._starts[i] <= line <= self._ends[i]:
            return self.spans._ids[i]
        return None


class SourceRegistry:
    def __init__(self, state_dir: Path):
        self.path = Path(state_dir) / "sources.jsonl"
        self._lock = threading.Lock()
        self._cache: tuple[int, int, dict[str, SourceFile]] | None = None
        self._lines = 0

    def register(self, path: str | Path, fmt: str, spans: list[tuple[int, int, str]],
                 signature: list[int] | None = None, fsync: bool = True) -> None:
        entry = {"path": str(Path(path).resolve()), "format": fmt, "spans": [list(s) for s in spans],
                 "signature": signature or []}
        append_line(self.path, _registry_line(entry), fsync=fsync)
        self._lines += 1
        if fsync:
            self._maybe_compact()

    def _maybe_compact(self) -> None:
        # re-registrations append; rewrite once they are half the file
        if self._lines > 64 and self._lines > 2 * len(self.files()):
            self.compact()

    def flush(self) -> None:
        """fsync registrations appended with ``fsync=False`` (one for a batch of files)."""
        if self.path.exists():
            fd = os.open(self.path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            self._maybe_compact()

    def compact(self) -> None:
        """Rewrite the registry with one line a file (re-registrations append)."""
        files = self.files()
        text = "".join(
            _registry_line({"path": f.path, "format": f.format, "spans": [list(s) for s in f.spans],
                            "signature": f.signature}) + "\n"
            for f in files.values()
        )
        atomic_write(self.path, text)
        self._lines = len(files)

    @staticmethod
    def signature_of(path: Path) -> list[int]:
        st = os.stat(path)
        return [st.st_size, st.st_mtime_ns]

    def unchanged(self, path: Path) -> bool:
        """The file is registered with the size and mtime it has now."""
        entry = self.files().get(str(Path(path).resolve()))
        try:
            return bool(entry and entry.signature and entry.signature == self.signature_of(path))
        except OSError:
            return False

    def files(self) -> dict[str, SourceFile]:
        """Registered files by path, re-read only when the registry changed."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return {}
        with self._lock:
            if self._cache and self._cache[:2] == (st.st_mtime_ns, st.st_size):
                return self._cache[2]
            out: dict[str, SourceFile] = {}
            lines = 0
            with open(self.path, encoding="utf-8") as fh:
                for line in fh:
                    lines += 1
                    try:
                        d = json.loads(line)
                        out[d["path"]] = SourceFile(d["path"], d["format"], d["spans"],
                                                    list(d.get("signature") or []))
                    except (ValueError, KeyError, TypeError):
                        continue  # a torn last line after a crash: the rest still counts
            self._cache = (st.st_mtime_ns, st.st_size, out)
            self._lines = lines
            return out

    def episode_count(self) -> int:
        return sum(len(f.spans) for f in self.files().values())
