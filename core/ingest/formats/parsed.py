"""A parser's answer and how it reports trouble.

``Parsed`` / ``Malformed``: the episodes of a file, the line spans they came
from, and its bad lines. A bad line is reported with its 1-based number and a
one-line error; a file-level problem (binary, unreadable, empty, not a regular
file) is one ``Malformed`` with line 0. Parsers never raise for the content of
a file. ``Spool`` parks a session's finished parts on disk until it ends;
``storable`` / ``shown`` / ``one_line`` make any text fit a one-line report.
"""

from __future__ import annotations

import os
import pickle
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from core.models import Episode

# Malformed lines listed one by one per file; the rest are counted (a file of
# a million bad lines must not hold a million reports).
MAX_LISTED_MALFORMED = 1000


def storable(s: str) -> str:
    """Text every UTF-8 writer (SQLite, the ledger, JSON, a terminal) takes:
    bytes of a file name that are not UTF-8, which Python keeps as lone
    surrogates (``surrogateescape``), become ``\\xNN`` escapes."""
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        pass
    try:
        return s.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate that surrogateescape did not make
        return s.encode("utf-8", "backslashreplace").decode("utf-8")


_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def shown(path: str | Path) -> str:
    """A path (or any text) as people see it: ``storable``, and on one line
    (a newline in a file name shows as ``\\n``), so a report stays one line."""
    return _CONTROL_RE.sub(lambda m: repr(m.group())[1:-1], storable(os.fspath(path)))


@dataclass
class Malformed:
    file: str
    line: int
    error: str


class Spool:
    """Objects parked in an anonymous temporary file until they are needed.

    A session's episodes are built when it ends (its title and channel may be
    named on its last line), but holding every finished part of a long
    session in memory would grow with the file: the finished parts wait here.
    The file is created on first use and deleted when closed (private: mode
    0600, unlinked at once)."""

    def __init__(self) -> None:
        self._fh: BinaryIO | None = None

    def put(self, obj: Any) -> int:
        if self._fh is None:
            self._fh = tempfile.TemporaryFile(prefix="ars-ingest-")
        self._fh.seek(0, os.SEEK_END)
        at = self._fh.tell()
        pickle.dump(obj, self._fh, protocol=pickle.HIGHEST_PROTOCOL)
        return at

    def get(self, at: int) -> Any:
        assert self._fh is not None
        self._fh.seek(at)
        return pickle.load(self._fh)  # only what ``put`` wrote in this process

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


@dataclass
class Parsed:
    episodes: list[Episode] = field(default_factory=list)
    spans: list[tuple[int, int, str]] = field(default_factory=list)
    malformed: list[Malformed] = field(default_factory=list)
    bad_lines: int = 0  # every malformed report, listed or not
    spool: Spool = field(default_factory=Spool, repr=False, compare=False)
    _unlisted: int = field(default=0, repr=False)  # first line not listed one by one

    def bad(self, path: Path | str, line: int, error: str) -> None:
        self.bad_lines += 1
        if len(self.malformed) < MAX_LISTED_MALFORMED or line == 0:
            self.malformed.append(Malformed(shown(path), line, one_line(error)))
        elif not self._unlisted:
            self._unlisted = line

    def close(self, path: Path | str) -> None:
        """The file is done: say how many bad lines were not listed, free the spool."""
        self.spool.close()
        unlisted = self.bad_lines - len(self.malformed)
        if unlisted > 0 and self._unlisted:
            self.malformed.append(Malformed(shown(path), self._unlisted, (
                f"this line and {unlisted - 1} more malformed lines are not listed one by one "
                f"(the first {MAX_LISTED_MALFORMED} are)")))
            self._unlisted = 0


def one_line(text: str, limit: int = 200) -> str:
    s = shown(" ".join(str(text).split()))
    return s if len(s) <= limit else s[: limit - 1] + "…"


def describe(exc: BaseException) -> str:
    """An unexpected exception as a short phrase for a one-line report."""
    if isinstance(exc, RecursionError):
        return "nested too deeply to read"
    if isinstance(exc, MemoryError):
        return "too large to hold in memory"
    return one_line(f"{type(exc).__name__}: {exc}", 120)
