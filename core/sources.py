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

from .fsutil import append_line


@dataclass
class SourceFile:
    path: str
    format: str
    spans: list[tuple[int, int, str]] = field(default_factory=list)
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
        self._cache: tuple[float, int, dict[str, SourceFile]] | None = None

    def register(self, path: str | Path, fmt: str, spans: list[tuple[int, int, str]]) -> None:
        entry = {"path": str(Path(path).resolve()), "format": fmt, "spans": [list(s) for s in spans]}
        append_line(self.path, json.dumps(entry, ensure_ascii=False))

    def files(self) -> dict[str, SourceFile]:
        """Registered files by path, re-read only when the registry changed."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return {}
        with self._lock:
            if self._cache and self._cache[:2] == (st.st_mtime, st.st_size):
                return self._cache[2]
            out: dict[str, SourceFile] = {}
            with open(self.path, encoding="utf-8") as fh:
                for line in fh:
                    try:
                        d = json.loads(line)
                        out[d["path"]] = SourceFile(d["path"], d["format"], [tuple(s) for s in d["spans"]])
                    except (ValueError, KeyError, TypeError):
                        continue  # a torn last line after a crash: the rest still counts
            self._cache = (st.st_mtime, st.st_size, out)
            return out

    def episode_count(self) -> int:
        return sum(len(f.spans) for f in self.files().values())
