"""What every transcript parser shares.

* Streams: a parser is a generator ``stream_<format>(path, parsed)`` that
  yields episodes as they are complete, reading its file line by line, so
  memory is bounded by an episode, not by the file; bad lines go to
  ``parsed.malformed``, the spans to ``parsed.spans`` once it is exhausted.
  ``streaming`` wraps it (file-level checks; an unexpected exception ends the
  file with one line-0 error instead of the run) and ``collect`` turns it into
  ``parse_<format>(path) -> Parsed`` with every episode in a list.
* ``Parsed`` / ``Malformed``: a parser's answer. A bad line is reported with
  its 1-based number and a one-line error; a file-level problem (binary,
  unreadable, empty, not a regular file) is one ``Malformed`` with line 0.
  Parsers never raise for the content of a file.
* Line reading, memory-bounded: lines longer than ``MAX_LINE_BYTES`` are
  skipped in chunks and reported, never loaded whole; only regular files are
  opened (a FIFO would block forever); a NUL byte is its line's problem.
* ``Msg`` and ``SessionBuilder``: a session's messages become one or more
  episodes, split after ``GAP_SECONDS`` of silence or ``MAX_EPISODE_CHARS``
  of text, ids ``<source>:<session_id>:<part>``, ``meta["prev"]`` chaining the
  parts (FOLLOWED_BY in the graph), each part enriched by the deterministic
  extractor. Closed parts wait in a ``Spool`` on disk until the session ends.
* ``SpanCollector``: which source lines belong to which episode, as merged
  ``(first_line, last_line, episode_id)`` ranges for the raw-file tier.
* The noise filter: heartbeats, ``NO_REPLY``, session-start prompts, metadata
  envelopes, empty messages.
"""

from __future__ import annotations

import functools
import json
import os
import pickle
import re
import tempfile
from array import array
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterator

from core.enrich.extract import Hints, clip, enrich_deterministic
from core.models import Episode
from core.memory.sources import open_regular

# A session's messages become a new episode after this much silence or text.
GAP_SECONDS = 30 * 60
MAX_EPISODE_CHARS = 6000
# One message's text is cut to this much in an episode (the raw file keeps it all).
MAX_MESSAGE_CHARS = 12_000
MAX_TOOL_RESULT_CHARS = 2000
MAX_TOOL_ARG_CHARS = 300

MB = 1024 * 1024
# A line longer than this is skipped (read in chunks, never held whole).
MAX_LINE_BYTES = 8 * MB
_SKIP_CHUNK = 1 * MB
_SNIFF_BYTES = 8192
# A file whose first bytes hold NULs and are mostly not text is binary; a NUL
# in an otherwise text file is only its line's problem.
_BINARY_SHARE = 0.3
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


def to_datetime(value: Any) -> datetime | None:
    if value in (None, "") or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            secs = value / 1000 if value > 1e11 else value  # epoch ms or s
            return datetime.fromtimestamp(secs, tz=timezone.utc)
        except (OverflowError, OSError, ValueError):  # e.g. a 400-digit integer
            return None
    try:
        dt = datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


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


# -- noise ------------------------------------------------------------------------------
HEARTBEAT_RE = re.compile(r"^\s*(?:Read HEARTBEAT\.md if it exists|\[?heartbeat\]?\s*$)", re.I)
ACK_TOKENS = frozenset({"HEARTBEAT_OK", "NO_REPLY", "NO_REPLY.", "ANNOUNCE_SKIP"})
_NOISE_PREFIXES = (
    "A new session was started via /new or /reset",
    "✅ New session started",
    "Continue where you left off.",
    "[Request interrupted by user",
    "Review the conversation above and update the skill library",
    "Review the conversation above and consider saving to memory",
)
# Every pattern here runs on a whole message (up to a line's 8 MB) before it
# is cut to MAX_MESSAGE_CHARS, so each must be linear: no two quantifiers that
# can match the same characters back to back, and no lazy ``.*?`` that
# rescans the rest of the text for every opener that is never closed (those
# blocks are found with str.find instead, see ``_drop_blocks``).

# OpenClaw wraps inbound messages in "<Label> (untrusted metadata):" JSON blocks:
# the opening line and fence, then the body up to the first closing fence.
_METADATA_OPEN_RE = re.compile(r"^[^\n]{0,80}\(untrusted[^)\n]*\):[ \t]*\n```[a-z]*[ \t]*\n", re.M)
_METADATA_CLOSE_RE = re.compile(r"\n```[ \t]*(?:\n|$)", re.M)
# A reply tag: [[reply_to_current]], [[ reply_to: 123 ]]; its argument is short.
_REPLY_TAG_RE = re.compile(r"\[\[\s*[a-z_]+(?:\s*:[^\]]{0,200}|\s*)\]\]")
_MSG_ID_RE = re.compile(r"^\[message_id: [^\]\n]*\]\s*$", re.M)
_STAMP_PREFIX_RE = re.compile(r"^\[(?:[A-Z][a-z]{2} )?\d{4}-\d{2}-\d{2} \d{1,2}:\d{2}(?::\d{2})?(?: [A-Z]{2,5}(?:[+-]\d{1,2}(?::?\d{2})?)?)?\]\s*")
_SPACES_RE = re.compile(r"\s*")


def _drop_blocks(text: str, start: str, end: str) -> str:
    """``text`` without its ``start`` … ``end`` blocks (each with the
    whitespace after it); a ``start`` never closed stays as text. Left to
    right with str.find: once one opener has no closer after it, no later
    one has, so the scan stops (a lazy regex would rescan to the end for
    every unclosed opener: quadratic)."""
    out: list[str] = []
    pos = 0
    while (i := text.find(start, pos)) >= 0:
        j = text.find(end, i + len(start))
        if j < 0:
            break
        out.append(text[pos:i])
        pos = _SPACES_RE.match(text, j + len(end)).end()  # type: ignore[union-attr]
    out.append(text[pos:])
    return "".join(out)


def _drop_metadata_blocks(text: str, hints: Hints | None) -> str:
    """Remove OpenClaw's untrusted-metadata blocks; names in them go to ``hints``."""
    out: list[str] = []
    pos = 0
    while (m := _METADATA_OPEN_RE.search(text, pos)) is not None:
        close = _METADATA_CLOSE_RE.search(text, m.end())
        if close is None:
            break  # no closing fence after this opener, so none after a later one
        if hints is not None:
            _metadata_hints(text[m.end():close.start()], hints)
        out.append(text[pos:m.start()])
        pos = close.end()
    out.append(text[pos:])
    return "".join(out)


def is_noise(text: str) -> bool:
    """A message that carries nothing to remember."""
    s = text.strip()
    if not s:
        return True
    if s.strip("*_`. ") in ACK_TOKENS or s in ACK_TOKENS:
        return True
    if HEARTBEAT_RE.match(s):
        return True
    return s.startswith(_NOISE_PREFIXES)


def strip_envelope(text: str, hints: Hints | None = None) -> str:
    """Remove metadata envelopes (OpenClaw's untrusted-metadata JSON blocks,
    ``[message_id: …]`` lines, timestamp prefixes, reply tags, injected
    memories and system reminders); names found in them go to ``hints``."""
    s = text
    if "(untrusted" in s:
        s = _drop_metadata_blocks(s, hints)
    if "[[" in s:
        s = _REPLY_TAG_RE.sub("", s)
    if "[message_id:" in s:
        s = _MSG_ID_RE.sub("", s)
    if "<relevant-memories>" in s:
        s = _drop_blocks(s, "<relevant-memories>", "</relevant-memories>")
    if "<system-reminder>" in s:
        s = _drop_blocks(s, "<system-reminder>", "</system-reminder>")
    s = s.strip()
    if s.startswith("["):
        s = _STAMP_PREFIX_RE.sub("", s, count=1)
    return s


def _metadata_hints(block: str, hints: Hints) -> None:
    try:
        data = loads(block)
    except ValueError:
        return
    if not isinstance(data, dict):
        return
    name = data.get("sender") or data.get("name")
    if isinstance(name, str) and name.strip() and not name.strip().isdigit() and name not in hints.people:
        hints.people.append(name.strip())
    for key in ("chat_id", "channel", "provider", "surface"):
        v = data.get(key)
        if isinstance(v, str) and v:
            ch = v.split(":", 1)[0]
            if ch and not ch.isdigit() and ch not in hints.channels:
                hints.channels.append(ch)
            break


# -- rendering --------------------------------------------------------------------------
_ARG_ORDER = ("command", "cmd", "file_path", "path", "filePath", "url", "query", "pattern", "description",
              "prompt", "old_string", "new_string", "content")


def render_args(args: Any) -> str:
    """A tool call's arguments as one short line, the telling keys first."""
    if isinstance(args, str):
        try:
            args = loads(args)
        except ValueError:
            return clip(args, MAX_TOOL_ARG_CHARS)
    if not isinstance(args, dict):
        return clip(_dumps(args), MAX_TOOL_ARG_CHARS) if args else ""
    keys = [k for k in _ARG_ORDER if k in args] + [k for k in args if k not in _ARG_ORDER]
    parts: list[str] = []
    for k in keys[:6]:
        v = args[k]
        if isinstance(v, (dict, list)):
            v = _dumps(v)
        if v in (None, "", False):
            continue
        parts.append(f"{k}={clip(str(v), MAX_TOOL_ARG_CHARS)}")
    return clip("; ".join(parts), 2 * MAX_TOOL_ARG_CHARS)


def _dumps(value: Any) -> str:
    """A value as JSON text for a one-line rendering ("…" when nested too deeply to write)."""
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (ValueError, RecursionError):
        return "…"


def tool_args(args: Any) -> dict:
    """Tool arguments as a dict (some formats store them as a JSON string)."""
    if isinstance(args, dict):
        return args
    if isinstance(args, str):
        try:
            v = loads(args)
            return v if isinstance(v, dict) else {}
        except ValueError:
            return {}
    return {}


def block_text(content: Any, keep: tuple[str, ...] = ("text",)) -> str:
    """The text of a message ``content``: a string, or blocks of the kinds in ``keep``."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    out = []
    for b in content:
        if isinstance(b, str):
            out.append(b)
        elif isinstance(b, dict) and b.get("type") in keep:
            t = b.get("text")
            if isinstance(t, str):
                out.append(t)
    return "\n".join(out)


# -- messages -> episodes ---------------------------------------------------------------
@dataclass
class Msg:
    """One message of a session, ready to go into an episode."""

    line: int
    role: str
    text: str  # rendered for the episode, role prefix included
    ts: datetime | None = None
    hints: Hints = field(default_factory=Hints)
    lines: tuple[int, ...] = ()  # further source lines that contributed (besides ``line``)


class SpanCollector:
    """Source lines per episode, merged into ranges.

    Consecutive lines of one episode merge into one span even across lines
    that belong to no episode (noise, metadata), but never across a line of
    another episode, so spans of interleaved sessions stay exact. A mark is
    two machine integers (a file of a million lines costs megabytes, not a
    tuple a line), sorted at the end only when they came out of order.
    """

    def __init__(self) -> None:
        self._lines = array("q")
        self._owners = array("q")  # index into _ids
        self._ids: list[str] = []
        self._index: dict[str, int] = {}
        self._in_order = True

    def add(self, line: int, episode_id: str) -> None:
        owner = self._index.get(episode_id)
        if owner is None:
            owner = self._index[episode_id] = len(self._ids)
            self._ids.append(episode_id)
        if self._lines and line < self._lines[-1]:
            self._in_order = False
        self._lines.append(line)
        self._owners.append(owner)

    def add_range(self, first: int, last: int, episode_id: str) -> None:
        self.add(first, episode_id)
        if last != first:
            self.add(last, episode_id)

    def _ordered(self) -> Iterator[tuple[int, int]]:
        """(line, owner) by line; marks of one line keep the order they were added in."""
        lines, owners = self._lines, self._owners
        if self._in_order:
            yield from zip(lines, owners)
            return
        for i in sorted(range(len(lines)), key=lines.__getitem__):  # stable
            yield lines[i], owners[i]

    def spans(self) -> list[tuple[int, int, str]]:
        out: list[tuple[int, int, str]] = []
        first = last = owner = -1  # the run being extended
        for line, who in self._ordered():
            if who == owner:
                last = line
                continue
            if owner >= 0:
                out.append((first, last, self._ids[owner]))
            first, last, owner = line, line, who
        if owner >= 0:
            out.append((first, last, self._ids[owner]))
        return list(dict.fromkeys(out))


@dataclass
class _Part:
    index: int
    msgs: list[Msg] = field(default_factory=list)
    size: int = 0
    first: datetime | None = None
    last: datetime | None = None
    meta: dict[str, Any] = field(default_factory=dict)


# Complete parts a session holds in memory before they are parked in the spool.
KEEP_PARTS = 16


class SessionBuilder:
    """Messages of one session -> episodes (split on gaps and size).

    A session's episodes are built in ``finish``, since its title and
    channel, which every episode carries, may be named on its very last
    line. Until then at most KEEP_PARTS complete parts (and the open one)
    are held in memory; older ones wait in the ``spool`` (when given), so a
    long session costs disk, not memory."""

    def __init__(self, path: Path, source: str, session_id: str, *, agent: str = "", channel: str = "",
                 meta: dict[str, Any] | None = None, hints: Hints | None = None,
                 gap_seconds: float = GAP_SECONDS, max_chars: int = MAX_EPISODE_CHARS,
                 spool: Spool | None = None):
        self.path = path
        self.source = source
        self.session_id = session_id
        self.agent = agent
        self.channel = channel
        self.meta = dict(meta or {})
        self.hints = hints or Hints()  # session-wide: cwd, project, title
        self.gap_seconds = gap_seconds
        self.max_chars = max_chars
        self.spool = spool
        self._done: list[_Part | int] = []  # complete parts, or their place in the spool
        self._held = 0  # complete parts in memory
        self._open: _Part | None = None
        self._parts = 0
        self._messages = 0
        self._first_channel = ""  # the first platform a message named
        self._cut = False
        self._pending_meta: dict[str, Any] = {}

    def __getstate__(self) -> dict[str, Any]:
        # parked in the spool itself (``SessionTable``): the spool's file does not pickle
        return {**self.__dict__, "spool": None}

    @property
    def message_count(self) -> int:
        return self._messages

    def cut(self) -> None:
        """The next message starts a new episode (a compaction, a new branch)."""
        self._cut = True

    def set_part_meta(self, key: str, value: Any) -> None:
        """Meta for the episode now open (or the next one)."""
        if self._open is not None and not self._cut:
            self._open.meta[key] = value
        else:
            self._pending_meta[key] = value

    def add(self, msg: Msg) -> None:
        if len(msg.text) > MAX_MESSAGE_CHARS:
            msg.text = msg.text[: MAX_MESSAGE_CHARS - 1] + "…"
        cur = self._open
        new = cur is None or self._cut
        if cur is not None and not new:
            if cur.last and msg.ts and (msg.ts - cur.last).total_seconds() > self.gap_seconds:
                new = True
            elif cur.size + len(msg.text) > self.max_chars and cur.msgs:
                new = True
        if new or cur is None:
            self._close_part()
            cur = self._open = _Part(self._parts, meta=self._pending_meta)
            self._parts += 1
            self._pending_meta = {}
            self._cut = False
        cur.msgs.append(msg)
        cur.size += len(msg.text) + 1
        self._messages += 1
        if not self._first_channel and msg.hints.channels:
            self._first_channel = msg.hints.channels[0]
        if msg.ts:
            cur.first = cur.first or msg.ts
            cur.last = msg.ts if cur.last is None or msg.ts > cur.last else cur.last

    def _close_part(self) -> None:
        if self._open is None:
            return
        self._done.append(self._open)
        self._open = None
        self._held += 1
        if self._held > KEEP_PARTS:
            self.spill()  # a short session never touches disk

    def spill(self) -> None:
        """Park the complete parts held in memory (in order) in the spool."""
        if self.spool is not None and self._held:
            self._done = [self.spool.put(p) if isinstance(p, _Part) else p for p in self._done]
            self._held = 0

    def _all_parts(self) -> Iterator[_Part]:
        for part in self._done:
            yield self.spool.get(part) if isinstance(part, int) and self.spool is not None else part  # type: ignore[misc]
        if self._open is not None:
            yield self._open

    def finish(self, parsed: Parsed, spans: SpanCollector, title: str = "") -> Iterator[Episode]:
        """Close the session: its episodes, enriched, one at a time. An episode
        that cannot be built is reported at its first line; the others go on."""
        prev: str | None = None
        # A platform named once (an envelope, a session column) holds for the whole session.
        channel = self.channel or self._first_channel
        for part in self._all_parts():
            if not part.msgs:
                continue
            try:
                ep = self._episode(part, channel, title, prev)
            except Exception as exc:  # noqa: BLE001 - one episode's failure is its lines' error
                parsed.bad(self.path, part.msgs[0].line, f"cannot build the episode of lines "
                                                         f"{part.msgs[0].line}-{part.msgs[-1].line}: {describe(exc)}")
                continue
            for m in part.msgs:
                spans.add(m.line, ep.id)
                for ln in m.lines:
                    spans.add(ln, ep.id)
            prev = ep.id
            yield ep

    def _episode(self, part: _Part, channel: str, title: str, prev: str | None) -> Episode:
        eid = f"{self.source}:{self.session_id}:{part.index}"
        meta: dict[str, Any] = {**self.meta, **part.meta, "path": storable(str(self.path))}
        if title:
            meta["title"] = title
        if prev:
            meta["prev"] = prev
        hints = Hints(title=title, cwd=self.hints.cwd, projects=list(self.hints.projects),
                      agents=list(self.hints.agents), channels=list(self.hints.channels),
                      people=list(self.hints.people))
        for m in part.msgs:
            hints.merge(m.hints)
        hints.people = list(dict.fromkeys(hints.people))
        hints.channels = list(dict.fromkeys(hints.channels))
        ep = Episode(
            id=eid, source=self.source, session_id=self.session_id, agent=self.agent,  # type: ignore[arg-type]
            channel=channel,
            text="\n".join(m.text for m in part.msgs), first_ts=part.first, last_ts=part.last,
            message_count=len(part.msgs), meta=meta,
        )
        return enrich_deterministic(ep, hints)


class SessionTable:
    """The open sessions of one file by id, in the order first seen.

    A file can interleave any number of sessions (generic JSONL: one
    ``session_id`` a line), each of which must stay open to the end of the
    file. The most recently used ``live`` builders stay in memory; the others
    are parked in the spool and read back when their session speaks again,
    so memory is bounded by ``live`` open episodes, not by the session count."""

    def __init__(self, spool: Spool, live: int = 256):
        self.spool = spool
        self.live = live
        self._all: dict[str, SessionBuilder | int] = {}  # first-seen order; parked: spool offset
        self._recent: OrderedDict[str, SessionBuilder] = OrderedDict()

    def get(self, key: str) -> SessionBuilder | None:
        entry = self._all.get(key)
        if entry is None:
            return None
        if isinstance(entry, int):
            entry = self._unpark(key, entry)
        self._recent.move_to_end(key)
        return entry

    def add(self, key: str, builder: SessionBuilder) -> SessionBuilder:
        self._all[key] = builder
        self._recent[key] = builder
        self._park_idle()
        return builder

    def _unpark(self, key: str, at: int) -> SessionBuilder:
        builder: SessionBuilder = self.spool.get(at)
        builder.spool = self.spool
        self._all[key] = builder
        self._recent[key] = builder
        self._park_idle()
        return builder

    def _park_idle(self) -> None:
        while len(self._recent) > self.live:
            key, builder = self._recent.popitem(last=False)
            builder.spill()  # its complete parts are written once, not with every parking
            self._all[key] = self.spool.put(builder)

    def builders(self) -> Iterator[SessionBuilder]:
        """Every session in first-seen order (parked ones read back one at a time)."""
        for key in list(self._all):
            entry = self._all.pop(key)
            self._recent.pop(key, None)
            if isinstance(entry, int):
                entry = self.spool.get(entry)
                entry.spool = self.spool
            yield entry


def role_line(role: str, text: str) -> str:
    return f"{role}: {text}"


def tool_line(role: str, name: str, args: Any) -> str:
    rendered = render_args(args)
    return f"{role} → {name}: {rendered}" if rendered else f"{role} → {name}"


def result_line(name: str, text: str, error: bool = False) -> str:
    label = f"tool {name}" if name else "tool"
    return f"{label}{' (error)' if error else ''}: {clip_block(text, MAX_TOOL_RESULT_CHARS)}"


def clip_block(text: str, limit: int) -> str:
    """Text kept as written (newlines too) up to ``limit`` characters."""
    s = text.strip()
    return s if len(s) <= limit else s[: limit - 1].rstrip() + "…"


__all__ = [
    "GAP_SECONDS", "MAX_EPISODE_CHARS", "MAX_LINE_BYTES", "MAX_MESSAGE_CHARS", "Malformed", "Msg", "Parsed",
    "SessionBuilder", "SessionTable", "SpanCollector", "Spool", "Stream", "block_text", "clip", "clip_block",
    "collect", "decode_line", "describe", "file_problem", "is_noise", "iter_lines", "iter_objects", "line_failed",
    "loads", "nul_error", "one_line", "render_args", "result_line", "role_line", "shown", "storable",
    "streaming", "strip_envelope", "to_datetime", "tool_args", "tool_line",
]


def blocks(content: Any) -> Iterator[dict]:
    """The content blocks of a message; a bare string is one text block."""
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict):
            yield block
