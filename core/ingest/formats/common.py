"""What every transcript parser shares.

* ``Parsed`` / ``Malformed``: a parser's answer. A bad line is reported with
  its 1-based number and a one-line error; a file-level problem (binary,
  unreadable, empty) is one ``Malformed`` with line 0. Parsers never raise
  for the content of a file.
* Line reading, memory-bounded: lines longer than ``MAX_LINE_BYTES`` are
  skipped in chunks and reported, never loaded whole.
* ``Msg`` and ``SessionBuilder``: a session's messages become one or more
  episodes, split after ``GAP_SECONDS`` of silence or ``MAX_EPISODE_CHARS``
  of text, ids ``<source>:<session_id>:<part>``, ``meta["prev"]`` chaining the
  parts (FOLLOWED_BY in the graph), each part enriched by the deterministic
  extractor.
* ``SpanCollector``: which source lines belong to which episode, as merged
  ``(first_line, last_line, episode_id)`` ranges for the raw-file tier.
* The noise filter: heartbeats, ``NO_REPLY``, session-start prompts, metadata
  envelopes, empty messages.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

from ...enrich.extract import Hints, clip, enrich_deterministic
from ...models import Episode

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


@dataclass
class Malformed:
    file: str
    line: int
    error: str


@dataclass
class Parsed:
    episodes: list[Episode] = field(default_factory=list)
    spans: list[tuple[int, int, str]] = field(default_factory=list)
    malformed: list[Malformed] = field(default_factory=list)

    def bad(self, path: Path | str, line: int, error: str) -> None:
        self.malformed.append(Malformed(str(path), line, one_line(error)))


def one_line(text: str, limit: int = 200) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def to_datetime(value: Any) -> datetime | None:
    if value in (None, "") or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        secs = value / 1000 if value > 1e11 else value  # epoch ms or s
        try:
            return datetime.fromtimestamp(secs, tz=timezone.utc)
        except (OverflowError, OSError, ValueError):
            return None
    try:
        dt = datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


# -- file-level checks and line reading -------------------------------------------------
def file_problem(path: Path) -> str | None:
    """Why the file cannot be a transcript at all (binary, empty), or None."""
    with open(path, "rb") as fh:
        head = fh.read(_SNIFF_BYTES)
        if not head.strip():
            # only whitespace so far: empty unless something follows
            while head and not head.strip():
                head = fh.read(_SNIFF_BYTES)
            if not head:
                return "empty file: nothing to ingest"
    if b"\x00" in head:
        return "binary file (NUL bytes): not a text transcript"
    return None


def guarded(parse: Callable[..., Parsed]) -> Callable[..., Parsed]:
    """A parser that reports file-level problems as one line-0 ``Malformed``
    instead of raising: unreadable, binary or empty files."""

    @functools.wraps(parse)
    def wrapper(path: Path, *args: Any, **kwargs: Any) -> Parsed:
        path = Path(path)
        try:
            problem = file_problem(path)
            if problem:
                out = Parsed()
                out.bad(path, 0, problem)
                return out
            return parse(path, *args, **kwargs)
        except OSError as exc:
            out = Parsed()
            out.bad(path, 0, f"cannot read: {exc.strerror or exc}")
            return out

    return wrapper


def iter_lines(path: Path, parsed: Parsed, max_bytes: int = MAX_LINE_BYTES) -> Iterator[tuple[int, bytes]]:
    """(line number, raw bytes) of each line; over-long lines are skipped in
    chunks and reported, so memory stays bounded by ``max_bytes``."""
    with open(path, "rb") as fh:
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


def decode_line(raw: bytes, no: int) -> str:
    """A line as text; raises UnicodeDecodeError for invalid UTF-8."""
    s = raw.decode("utf-8")
    return s.lstrip("\ufeff") if no == 1 else s


def iter_objects(path: Path, parsed: Parsed, max_bytes: int = MAX_LINE_BYTES) -> Iterator[tuple[int, dict]]:
    """(line number, JSON object) for each good line; the rest go to malformed."""
    for no, raw in iter_lines(path, parsed, max_bytes):
        if not raw.strip():
            continue
        try:
            obj = json.loads(decode_line(raw, no))
        except UnicodeDecodeError as exc:
            parsed.bad(path, no, f"invalid UTF-8 at byte {exc.start}")
            continue
        except json.JSONDecodeError as exc:
            parsed.bad(path, no, f"invalid JSON: {exc.msg} (column {exc.colno})")
            continue
        except RecursionError:
            parsed.bad(path, no, "invalid JSON: nested too deeply")
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
# OpenClaw wraps inbound messages in "<Label> (untrusted metadata):" JSON blocks.
METADATA_BLOCK_RE = re.compile(
    r"^[^\n]{0,80}\(untrusted[^)\n]*\):[ \t]*\n```[a-z]*[ \t]*\n(.*?)\n```[ \t]*(?:\n|$)", re.S | re.M)
_REPLY_TAG_RE = re.compile(r"\[\[\s*[a-z_]+(?:\s*:[^\]]*)?\s*\]\]")
_MSG_ID_RE = re.compile(r"^\[message_id: [^\]]*\]\s*$", re.M)
_STAMP_PREFIX_RE = re.compile(r"^\[(?:[A-Z][a-z]{2} )?\d{4}-\d{2}-\d{2} \d{1,2}:\d{2}(?::\d{2})?(?: [A-Z]{2,5}(?:[+-]\d{1,2}(?::?\d{2})?)?)?\]\s*")
_RELEVANT_MEMORIES_RE = re.compile(r"<relevant-memories>.*?</relevant-memories>\s*", re.S)
_SYSTEM_REMINDER_RE = re.compile(r"<system-reminder>.*?</system-reminder>\s*", re.S)


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
        def meta(m: re.Match) -> str:
            if hints is not None:
                _metadata_hints(m.group(1), hints)
            return ""
        s = METADATA_BLOCK_RE.sub(meta, s)
    if "[[" in s:
        s = _REPLY_TAG_RE.sub("", s)
    if "[message_id:" in s:
        s = _MSG_ID_RE.sub("", s)
    if "<relevant-memories>" in s:
        s = _RELEVANT_MEMORIES_RE.sub("", s)
    if "<system-reminder>" in s:
        s = _SYSTEM_REMINDER_RE.sub("", s)
    s = s.strip()
    if s.startswith("["):
        s = _STAMP_PREFIX_RE.sub("", s, count=1)
    return s


def _metadata_hints(block: str, hints: Hints) -> None:
    try:
        data = json.loads(block)
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
            args = json.loads(args)
        except ValueError:
            return clip(args, MAX_TOOL_ARG_CHARS)
    if not isinstance(args, dict):
        return clip(json.dumps(args, ensure_ascii=False, default=str), MAX_TOOL_ARG_CHARS) if args else ""
    keys = [k for k in _ARG_ORDER if k in args] + [k for k in args if k not in _ARG_ORDER]
    parts: list[str] = []
    for k in keys[:6]:
        v = args[k]
        if isinstance(v, (dict, list)):
            v = json.dumps(v, ensure_ascii=False, default=str)
        if v in (None, "", False):
            continue
        parts.append(f"{k}={clip(str(v), MAX_TOOL_ARG_CHARS)}")
    return clip("; ".join(parts), 2 * MAX_TOOL_ARG_CHARS)


def tool_args(args: Any) -> dict:
    """Tool arguments as a dict (some formats store them as a JSON string)."""
    if isinstance(args, dict):
        return args
    if isinstance(args, str):
        try:
            v = json.loads(args)
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
    another episode, so spans of interleaved sessions stay exact.
    """

    def __init__(self) -> None:
        self._marks: list[tuple[int, int, str]] = []  # (line, order, episode id)

    def add(self, line: int, episode_id: str) -> None:
        self._marks.append((line, len(self._marks), episode_id))

    def add_range(self, first: int, last: int, episode_id: str) -> None:
        self.add(first, episode_id)
        if last != first:
            self.add(last, episode_id)

    def spans(self) -> list[tuple[int, int, str]]:
        out: list[tuple[int, int, str]] = []
        run: list = []  # [first, last, episode id] being extended
        for line, _, eid in sorted(self._marks):
            if run and run[2] == eid:
                run[1] = line
                continue
            if run:
                out.append((run[0], run[1], run[2]))
            run = [line, line, eid]
        if run:
            out.append((run[0], run[1], run[2]))
        return list(dict.fromkeys(out))


@dataclass
class _Part:
    index: int
    msgs: list[Msg] = field(default_factory=list)
    size: int = 0
    first: datetime | None = None
    last: datetime | None = None
    meta: dict[str, Any] = field(default_factory=dict)


class SessionBuilder:
    """Messages of one session -> episodes (split on gaps and size)."""

    def __init__(self, path: Path, source: str, session_id: str, *, agent: str = "", channel: str = "",
                 meta: dict[str, Any] | None = None, hints: Hints | None = None,
                 gap_seconds: float = GAP_SECONDS, max_chars: int = MAX_EPISODE_CHARS):
        self.path = path
        self.source = source
        self.session_id = session_id
        self.agent = agent
        self.channel = channel
        self.meta = dict(meta or {})
        self.hints = hints or Hints()  # session-wide: cwd, project, title
        self.gap_seconds = gap_seconds
        self.max_chars = max_chars
        self.parts: list[_Part] = []
        self._cut = False
        self._pending_meta: dict[str, Any] = {}

    @property
    def message_count(self) -> int:
        return sum(len(p.msgs) for p in self.parts)

    def cut(self) -> None:
        """The next message starts a new episode (a compaction, a new branch)."""
        self._cut = True

    def set_part_meta(self, key: str, value: Any) -> None:
        """Meta for the episode now open (or the next one)."""
        if self.parts and not self._cut:
            self.parts[-1].meta[key] = value
        else:
            self._pending_meta[key] = value

    def add(self, msg: Msg) -> None:
        if len(msg.text) > MAX_MESSAGE_CHARS:
            msg.text = msg.text[: MAX_MESSAGE_CHARS - 1] + "…"
        cur = self.parts[-1] if self.parts else None
        new = cur is None or self._cut
        if cur is not None and not new:
            if cur.last and msg.ts and (msg.ts - cur.last).total_seconds() > self.gap_seconds:
                new = True
            elif cur.size + len(msg.text) > self.max_chars and cur.msgs:
                new = True
        if new:
            cur = _Part(len(self.parts), meta=self._pending_meta)
            self._pending_meta = {}
            self.parts.append(cur)
            self._cut = False
        assert cur is not None
        cur.msgs.append(msg)
        cur.size += len(msg.text) + 1
        if msg.ts:
            cur.first = cur.first or msg.ts
            cur.last = msg.ts if cur.last is None or msg.ts > cur.last else cur.last

    def finish(self, parsed: Parsed, spans: SpanCollector, title: str = "") -> list[Episode]:
        """Close the session: its episodes, enriched, appended to ``parsed``."""
        out: list[Episode] = []
        prev: str | None = None
        # A platform named once (an envelope, a session column) holds for the whole session.
        channel = self.channel or next((c for p in self.parts for m in p.msgs for c in m.hints.channels), "")
        for part in self.parts:
            if not part.msgs:
                continue
            eid = f"{self.source}:{self.session_id}:{part.index}"
            meta: dict[str, Any] = {**self.meta, **part.meta, "path": str(self.path)}
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
            ep = enrich_deterministic(ep, hints)
            out.append(ep)
            for m in part.msgs:
                spans.add(m.line, eid)
                for ln in m.lines:
                    spans.add(ln, eid)
            prev = eid
        parsed.episodes.extend(out)
        return out


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
    "GAP_SECONDS", "MAX_EPISODE_CHARS", "MAX_LINE_BYTES", "Malformed", "Msg", "Parsed", "SessionBuilder",
    "SpanCollector", "block_text", "clip", "clip_block", "decode_line", "file_problem", "guarded", "is_noise",
    "iter_lines", "iter_objects", "one_line", "render_args", "result_line", "role_line", "strip_envelope",
    "to_datetime", "tool_args", "tool_line",
]


def blocks(content: Any) -> Iterator[dict]:
    """The content blocks of a message; a bare string is one text block."""
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict):
            yield block
