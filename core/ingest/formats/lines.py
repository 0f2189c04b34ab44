"""Reading a transcript file, memory-bounded, and turning a stream into a parser.

* Streams: a parser is a generator ``stream_<format>(path, parsed)`` that
  yields episodes as they are complete, reading its file line by line, so
  memory is bounded by an episode, not by the file; bad lines go to
  ``parsed.malformed``, the spans to ``parsed.spans`` once it is exhausted.
  ``streaming`` wraps it (file-level checks; an unexpected exception ends the
  file with one line-0 error instead of the run) and ``collect`` turns it into
  ``parse_<format>(path) -> Parsed`` with every episode in a list.
* Line reading: lines longer than ``MAX_LINE_BYTES`` are skipped in chunks and
  reported, never loaded whole; only regular files are opened (a FIFO would
  block forever); a NUL byte is its line's problem; JSON lines are decoded
  with lone surrogates made valid.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any, Callable, Iterator

from core.ingest.formats.parsed import Parsed, describe, one_line
from core.memory.sources import open_regular
from core.models import Episode

MB = 1024 * 1024
# A line longer than this is skipped (read in chunks, never held whole).
MAX_LINE_BYTES = 8 * MB
_SKIP_CHUNK = 1 * MB
_SNIFF_BYTES = 8192
# A file whose first bytes hold NULs and are mostly not text is binary; a NUL
# in an otherwise text file is only its line's problem.
_BINARY_SHARE = 0.3


# -- file-level checks and line reading -------------------------------------------------
def file_problem(path: Path) -> str | None:
    """Why the file cannot be a transcript at all (binary, empty), or None.
    Raises OSError (``NotRegularFile`` for a FIFO or a device) when it cannot be read."""
    with open_regular(path) as fh:
        head = fh.read(_SNIFF_BYTES)
        if not head.strip():
            # only whitespace so far: empty unless something follows
            while head and not head.strip():
                head = fh.read(_SNIFF_BYTES)
            if not head:
                return "empty file: nothing to ingest"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "UTF-16 text: only UTF-8 is read; convert it (iconv -f UTF-16 -t UTF-8) and ingest the copy"
    if b"\x00" in head and _mostly_not_text(head):
        return "binary file (NUL bytes): not a text transcript"
    return None


def _mostly_not_text(head: bytes) -> bool:
    """More than ``_BINARY_SHARE`` of the sniffed characters are control
    characters (other than whitespace and ESC) or invalid UTF-8."""
    text = head.decode("utf-8", "replace")
    odd = sum(1 for c in text if c == "\ufffd" or (c < " " and c not in "\t\n\r\f\v\b\x1b") or c == "\x7f")
    return odd > _BINARY_SHARE * len(text)


Stream = Callable[..., Iterator[Episode]]


def streaming(stream: Stream) -> Stream:
    """A parser stream that never raises for its file: a file-level problem
    (unreadable, not a regular file, binary, empty) is one line-0 report and
    no episode; an unexpected exception part-way (a bug, a pathological line
    no check foresaw) ends the file with one line-0 report, keeping what it
    yielded before. The run goes on with the next file either way."""

    @functools.wraps(stream)
    def wrapper(path: Path, parsed: Parsed, *args: Any, **kwargs: Any) -> Iterator[Episode]:
        path = Path(path)
        try:
            problem = file_problem(path)
            if problem:
                parsed.bad(path, 0, problem)
                return
            yield from stream(path, parsed, *args, **kwargs)
        except OSError as exc:
            parsed.bad(path, 0, f"cannot read: {exc.strerror or exc}")
        except Exception as exc:  # noqa: BLE001 - one file's failure is that file's error
            parsed.bad(path, 0, f"cannot parse: {describe(exc)}; the rest of the file was skipped")
        finally:
            parsed.close(path)

    return wrapper


def collect(stream: Stream) -> Callable[..., Parsed]:
    """``parse_<format>(path) -> Parsed``: the whole stream in one answer."""

    @functools.wraps(stream)
    def parse(path: Path, *args: Any, **kwargs: Any) -> Parsed:
        parsed = Parsed()
        parsed.episodes.extend(stream(Path(path), parsed, *args, **kwargs))
        return parsed

    parse.stream = stream  # type: ignore[attr-defined]
    return parse


def line_failed(parsed: Parsed, path: Path, no: int, exc: Exception) -> None:
    """An unexpected error while reading one line: that line's report; the file goes on."""
    parsed.bad(path, no, f"cannot read this line: {describe(exc)}; line skipped")


def iter_lines(path: Path, parsed: Parsed, max_bytes: int = MAX_LINE_BYTES) -> Iterator[tuple[int, bytes]]:
    """(line number, raw bytes) of each line; over-long lines are skipped in
    chunks and reported, so memory stays bounded by ``max_bytes``."""
    with open_regular(path) as fh:
        no = 0
        while True:
            raw = fh.readline(max_bytes + 1)
            if not raw:
                return
            no += 1
            if len(raw) > max_bytes and not raw.endswith(b"\n"):
                size = len(raw)
                del raw
                while True:
                    chunk = fh.readline(_SKIP_CHUNK)
                    if not chunk:
                        break
                    size += len(chunk)
                    if chunk.endswith(b"\n"):
                        break
                parsed.bad(path, no, f"line longer than {max_bytes // MB} MB ({size / MB:.0f} MB); skipped")
                continue
            yield no, raw


def nul_error(raw: bytes) -> str:
    column = raw.index(b"\x00") + 1
    return f"NUL byte at column {column}: binary data in a text line; line skipped"


def decode_line(raw: bytes, no: int) -> str:
    """A line as text; raises UnicodeDecodeError for invalid UTF-8."""
    s = raw.decode("utf-8")
    return s.lstrip("\ufeff") if no == 1 else s


# A JSON string escape of a UTF-16 surrogate (``\ud83d``): the only way JSON
# text makes a lone surrogate, which no UTF-8 writer (SQLite, the ledger) takes.
_SURROGATE_ESCAPE_RE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE_ESCAPE_BYTES_RE = re.compile(rb"\\u[dD][89a-fA-F]")


def loads(text: str | bytes, raw: bytes | None = None) -> Any:
    """``json.loads`` for file content: lone surrogates become U+FFFD, and
    every failure is a ``ValueError`` (nesting too deep included). ``raw``:
    the undecoded line, searched for surrogate escapes instead of ``text``."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None
    probe = raw if raw is not None else text
    pattern = _SURROGATE_ESCAPE_BYTES_RE if isinstance(probe, bytes) else _SURROGATE_ESCAPE_RE
    if pattern.search(probe):  # type: ignore[arg-type]
        value = scrub_surrogates(value)
    return value


def _valid(s: str) -> str:
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        return s.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def scrub_surrogates(value: Any) -> Any:
    """The value with lone surrogates in every string (keys too) replaced by
    U+FFFD; iterative, since a value can be nested hundreds deep."""
    if isinstance(value, str):
        return _valid(value)
    stack = [value]
    while stack:
        cur = stack.pop()
        if isinstance(cur, dict):
            for k in list(cur):
                v = cur[k]
                if isinstance(v, str):
                    cur[k] = _valid(v)
                elif isinstance(v, (dict, list)):
                    stack.append(v)
                fixed = _valid(k)
                if fixed != k:
                    cur[fixed] = cur.pop(k)
        elif isinstance(cur, list):
            for i, v in enumerate(cur):
                if isinstance(v, str):
                    cur[i] = _valid(v)
                elif isinstance(v, (dict, list)):
                    stack.append(v)
    return value


def _json_error(exc: ValueError) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON: {exc.msg} (column {exc.colno})"
    digits = re.search(r"value has (\d+) digits", str(exc))
    if digits:  # Python refuses to convert integers of over 4,300 digits
        return f"invalid JSON: a number of {digits.group(1)} digits (more than Python reads); line skipped"
    return f"invalid JSON: {one_line(str(exc), 120)}"


def iter_objects(path: Path, parsed: Parsed, max_bytes: int = MAX_LINE_BYTES) -> Iterator[tuple[int, dict]]:
    """(line number, JSON object) for each good line; the rest go to malformed."""
    for no, raw in iter_lines(path, parsed, max_bytes):
        if not raw.strip():
            continue
        if b"\x00" in raw:
            parsed.bad(path, no, nul_error(raw))
            continue
        try:
            obj = loads(decode_line(raw, no), raw)
        except UnicodeDecodeError as exc:
            parsed.bad(path, no, f"invalid UTF-8 at byte {exc.start}")
            continue
        except ValueError as exc:
            parsed.bad(path, no, _json_error(exc))
            continue
        if not isinstance(obj, dict):
            parsed.bad(path, no, f"expected a JSON object, got {_json_type(obj)}")
            continue
        yield no, obj


def _json_type(obj: Any) -> str:
    return {list: "list", str: "string", int: "number", float: "number", bool: "boolean",
            type(None): "null"}.get(type(obj), type(obj).__name__)
