"""Capture from a transcript the agent is writing (Claude Code): what was added since last time.

The checkpoint (core/capture/checkpoints.py) keeps where the last capture
stopped reading (byte offset of the last complete line, its line number, the
file's identity) and the reader's state there (core/ingest/formats/
claude_code.py ``checkpoint``: each session's open part, the tool names, the
titles). A capture reads the complete lines after that offset with the
format's own line reader, so its episodes are the ones ``ars ingest`` of the
whole file makes at that moment: same ids, same text. A line still being
written (no newline yet) waits for the next capture. A file that shrank or was
replaced is read again from its start (same ids again).

The first capture of a transcript reads it whole (once); later ones read one
turn's lines, so a turn costs the same at the start of a session as after
hours of it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

from core.capture.checkpoints import CaptureBusy, for_transcript
from core.capture.write import store_changed
from core.errors import BadQuery
from core.ingest.formats import claude_code
from core.ingest.formats.lines import MAX_LINE_BYTES, decode_line, loads
from core.ingest.formats.parsed import Parsed
from core.ingest.formats.sessions import SpanCollector
from core.memory.memory import Memory

VERSION = 1
FORMATS = ("claude-code",)


class _Tail:
    """The complete lines of ``path`` after ``offset``, as (line number, object); ``offset``
    and ``line`` move past each complete line read (good or bad)."""

    def __init__(self, path: Path, offset: int, line: int, parsed: Parsed):
        self.path, self.offset, self.line, self.parsed = path, offset, line, parsed

    def __iter__(self) -> Iterator[tuple[int, dict]]:
        with open(self.path, "rb") as fh:
            fh.seek(self.offset)
            while True:
                raw = fh.readline(MAX_LINE_BYTES + 1)
                if not raw:
                    return
                if not raw.endswith(b"\n"):
                    if len(raw) <= MAX_LINE_BYTES:
                        return  # being written: the next capture reads it whole
                    size = len(raw)  # over-long: skipped to its end, as the ingest does
                    while True:
                        chunk = fh.readline(1 << 20)
                        if not chunk:
                            return  # its end is not written yet
                        size += len(chunk)
                        if chunk.endswith(b"\n"):
                            break
                    self.line += 1
                    self.offset += size
                    self.parsed.bad(self.path, self.line, f"line longer than {MAX_LINE_BYTES >> 20} MB; skipped")
                    continue
                self.line += 1
                self.offset += len(raw)
                if not raw.strip():
                    continue
                try:
                    obj = loads(decode_line(raw, self.line), raw)
                except (UnicodeDecodeError, ValueError) as exc:
                    self.parsed.bad(self.path, self.line, f"not a JSON line ({type(exc).__name__})")
                    continue
                if isinstance(obj, dict):
                    yield self.line, obj


def _identity(st: os.stat_result) -> list[int]:
    return [st.st_dev, st.st_ino]


class CaptureDeferred(CaptureBusy):
    """A first capture of a transcript longer than the caller would wait for (read it in the background)."""


def capture_transcript(memory: Memory, path: str | Path, fmt: str = "claude-code", *,
                       wait: float = 5.0, first_read_max: int | None = None) -> list[str]:
    """Store what ``path`` added since the last capture; returns the ids of the episodes
    that were new or changed (none when the new lines were noise, or there were none). ``BadQuery`` for a path that is not a
    regular file or a format not captured this way; ``CaptureBusy`` after ``wait`` s;
    ``CaptureDeferred`` when there is no checkpoint yet and the file is over
    ``first_read_max`` bytes (a hook reads such a file whole in a process of its own)."""
    if fmt not in FORMATS:
        raise BadQuery(f"format {fmt!r} is not captured from a transcript: use {', '.join(FORMATS)}")
    path = Path(os.path.abspath(os.path.expanduser(os.fspath(path))))
    try:
        st = os.stat(path)
    except OSError as exc:
        raise BadQuery(f"transcript {path}: {exc.strerror or exc}; nothing captured") from None
    if not os.path.isfile(path):
        raise BadQuery(f"transcript {path} is not a regular file; nothing captured")
    cp = for_transcript(memory.state_dir, path)
    with cp.held(wait):
        state = cp.load()
        if not (state and state.get("v") == VERSION and state.get("file") == _identity(st)
                and isinstance(state.get("offset"), int) and 0 <= state["offset"] <= st.st_size):
            state = None  # first capture, or the file shrank or was replaced: read it from its start
            if first_read_max is not None and st.st_size > first_read_max:
                raise CaptureDeferred(f"transcript {path} is {st.st_size:,} bytes and was never captured: "
                                      "read it whole in the background")
        parsed = Parsed()
        try:
            t = claude_code.transcript(path, parsed, state and state.get("reader"))
            tail = _Tail(path, state["offset"] if state else 0, state["line"] if state else 0, parsed)
            claude_code.read_lines(t, parsed, tail)
            if state and tail.offset == state["offset"]:
                return []  # nothing new
            stored = store_changed(memory, list(claude_code.finish(t, parsed, SpanCollector())), wait)
            cp.save({"v": VERSION, "file": _identity(st), "offset": tail.offset, "line": tail.line,
                     "reader": claude_code.checkpoint(t)})
        finally:
            parsed.spool.close()
    return [ep.id for ep in stored]


def capture_in(state_dir: str | os.PathLike, path: str | Path, fmt: str = "claude-code", *, wait: float = 5.0,
               first_read_max: int | None = None) -> list[str]:
    """``capture_transcript`` for a hook run once per turn: the state directory's memory opened
    for this capture alone (core.hook_api: a hook does not load the facade, its loop, its sync)."""
    from core.config import load_settings
    from core.infra.state_dir import open_state_dir

    open_state_dir(Path(state_dir), True)
    memory = Memory(load_settings(state_dir=state_dir))
    try:
        return capture_transcript(memory, path, fmt, wait=wait, first_read_max=first_read_max)
    finally:
        memory.close()
