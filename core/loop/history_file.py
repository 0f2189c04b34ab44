"""Reading a loop's history file (``<goal>__<loop>.history.jsonl``, one
``HistoryEntry`` a line, the loop's write-ahead log): all of it, with torn or
corrupt lines skipped and reported, or only its last entry, read from the end."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from pydantic import ValidationError

from core.errors import first_error
from core.loop.models import HistoryEntry


@dataclass
class Problem:
    file: str
    error: str


def read_history(path: Path) -> tuple[list[HistoryEntry], list[Problem]]:
    """Entries of a history file; a torn or corrupt line is skipped and reported."""
    entries: list[HistoryEntry] = []
    problems: list[Problem] = []
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        return entries, problems
    with fh:
        for no, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            if not raw.endswith(b"\n"):
                problems.append(Problem(file=f"{path.name}:{no}", error="torn last line (a crash mid-write); ignored"))
                continue
            try:
                entries.append(HistoryEntry.model_validate_json(raw))
            except (ValidationError, ValueError) as exc:
                problems.append(Problem(file=f"{path.name}:{no}", error=f"unreadable history line: {describe_error(exc)}"))
    # a crash can leave a line with an index that a later (redone) entry repeats: the later one wins
    by_index: dict[int, HistoryEntry] = {}
    for e in entries:
        by_index[e.index] = e
    return [by_index[i] for i in sorted(by_index)], problems


def _lines_from_end(path: Path) -> Iterator[bytes]:
    """The complete (newline-ended) lines of a file, last first, read in blocks from the end:
    a loop's newest entry costs one block read however long its history is."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        size = os.fstat(fd).st_size
        buf = b""
        pos = size
        while pos > 0:
            start = max(0, pos - 65536)
            buf = os.pread(fd, pos - start, start) + buf
            pos = start
            lines = buf.split(b"\n")
            # lines[0] may be partial (unless pos == 0); the part after the last "\n" is torn
            complete = lines[1:-1] if pos > 0 else lines[:-1]
            for raw in reversed(complete):
                if raw.strip():
                    yield raw
            if pos > 0:
                # keep the partial first line (it ended at a newline we split on); the next
                # block read is prepended to it
                buf = lines[0] + b"\n"
    finally:
        os.close(fd)


def last_entry(path: Path | None) -> HistoryEntry | None:
    """The last complete, valid entry, read from the end of the file."""
    if path is None:
        return None
    for raw in _lines_from_end(path):
        try:
            return HistoryEntry.model_validate_json(raw)
        except (ValidationError, ValueError):
            continue
    return None


# An entry line as the store writes it (pydantic dumps fields in declaration order: index first).
_INDEX_PREFIX = re.compile(rb'\{"index":(\d{1,18}),')


def last_index(path: Path | None) -> int | None:
    """The index on the last complete line, read without parsing the entry (None: no line,
    or not one the store wrote). Indices never go down along a file, so when this is not
    past the checkpoint's seq, neither is the last valid entry's, and the checkpoint stands.
    Listing 1,000 loops this way skips parsing 1,000 full entries (each a whole LoopState)."""
    if path is None:
        return None
    for raw in _lines_from_end(path):
        m = _INDEX_PREFIX.match(raw)
        return int(m.group(1)) if m else None
    return None


def describe_error(exc: BaseException) -> str:
    """One line for a person: pydantic's first error, not its whole report."""
    if isinstance(exc, ValidationError) and exc.errors():
        return first_error(exc)
    return one_line_error(exc)


def one_line_error(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return (text[:200] + "…") if len(text) > 200 else text or type(exc).__name__
