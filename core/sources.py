"""Which source files hold which episodes: what the raw-file tier scans.

Ingestion records, per file, the line spans of its episodes
(``[first_line, last_line, episode_id]``, 1-based, inclusive) in
``sources.jsonl`` in the state directory. The raw tier needs nothing else: no
database, no server, only this list and the files themselves. A file
registered twice keeps its latest entry.
"""

from __future__ import annotations

import bisect
import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

from .fsutil import append_line, atomic_write


@dataclass
class SourceFile:
    path: str
    format: str
    spans: list[tuple[int, int, str]] = field(default_factory=list)
    signature: list[int] = field(default_factory=list)  # [size, mtime_ns] when ingested
    _starts: list[int] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        self.spans.sort()
        self._starts = [s[0] for s in self.spans]

    def episode_at(self, line: int) -> str | None:
        i = bisect.bisect_right(self._starts, line) - 1
        if i >= 0 and self.spans[i][0] <= line <= self.spans[i][1]:
            return self.spans[i][2]
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
        append_line(self.path, json.dumps(entry, ensure_ascii=False), fsync=fsync)
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
            json.dumps({"path": f.path, "format": f.format, "spans": [list(s) for s in f.spans],
                        "signature": f.signature}, ensure_ascii=False) + "\n"
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
                        out[d["path"]] = SourceFile(d["path"], d["format"], [tuple(s) for s in d["spans"]],
                                                    list(d.get("signature") or []))
                    except (ValueError, KeyError, TypeError):
                        continue  # a torn last line after a crash: the rest still counts
            self._cache = (st.st_mtime_ns, st.st_size, out)
            self._lines = lines
            return out

    def episode_count(self) -> int:
        return sum(len(f.spans) for f in self.files().values())
