"""File formats -> episodes, with the line span each episode came from.

A malformed line is reported with its line number and never stops the file;
a file-level problem (binary, empty, unreadable) is one report with line 0.

Formats (``PARSERS``):

* ``openclaw``: OpenClaw / pi session JSONL (``formats/openclaw.py``);
* ``claude-code``: Claude Code transcripts and subagent files (``formats/claude_code.py``);
* ``hermes``: ``hermes sessions export`` JSONL (``formats/hermes.py``);
* ``markdown``: MEMORY.md, memory/YYYY-MM-DD.md, notes (``formats/markdown.py``);
* ``episodes``: one ``Episode`` object a line, taken as given (not re-enriched);
* ``jsonl``: one message a line: ``role``, ``content``, ``timestamp``, ``session_id``.

``detect_format`` sniffs the first lines (``.md`` files are Markdown).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable, Iterator

from pydantic import ValidationError

from core.errors import first_error
from core.models import Episode
from core.memory.sources import open_regular
from core.ingest.formats.claude_code import parse_claude_code, stream_claude_code
from core.ingest.formats.common import (
    GAP_SECONDS, MAX_EPISODE_CHARS, MAX_LINE_BYTES, Malformed, Msg, Parsed, SessionBuilder, SessionTable,
    SpanCollector, Stream, block_text, collect, is_noise, iter_objects, line_failed, role_line, storable, streaming,
    strip_envelope, to_datetime,
)
from core.ingest.formats.hermes import parse_hermes, stream_hermes
from core.ingest.formats.markdown import parse_markdown, stream_markdown
from core.ingest.formats.openclaw import parse_openclaw, stream_openclaw
from core.enrich.extract import Hints

__all__ = [
    "GAP_SECONDS", "MAX_EPISODE_CHARS", "MAX_LINE_BYTES", "Malformed", "PARSERS", "Parsed", "STREAMS",
    "detect_format", "parse_claude_code", "parse_episodes", "parse_hermes", "parse_jsonl", "parse_markdown",
    "parse_openclaw", "to_datetime",
]

# An episode line's ``meta`` is stored as given; one nested deeper than this
# could not be written back out (JSON writers recurse) and means nothing to recall.
MAX_META_DEPTH = 32


def _err(exc: ValidationError) -> str:
    return first_error(exc, "line")


def _depth_over(value: Any, limit: int) -> bool:
    """``value`` nests lists/dicts deeper than ``limit`` (iterative: it may be hundreds deep)."""
    stack = [(value, 0)]
    while stack:
        cur, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(cur, dict):
            stack.extend((v, depth + 1) for v in cur.values() if isinstance(v, (dict, list)))
        elif isinstance(cur, list):
            stack.extend((v, depth + 1) for v in cur if isinstance(v, (dict, list)))
    return False


@streaming
def stream_episodes(path: Path, parsed: Parsed) -> Iterator[Episode]:
    spans: list[tuple[int, int, str]] = []  # one a line, as given (an id may repeat)
    for no, obj in iter_objects(path, parsed):
        try:
            if _depth_over(obj.get("meta"), MAX_META_DEPTH):
                parsed.bad(path, no, f"meta: nested deeper than {MAX_META_DEPTH} levels; line skipped")
                continue
            ep = Episode.model_validate(obj)
        except ValidationError as exc:
            parsed.bad(path, no, _err(exc))
            continue
        except Exception as exc:  # noqa: BLE001 - one line's failure is that line's error
            line_failed(parsed, path, no, exc)
            continue
        spans.append((no, no, ep.id))
        yield ep
    parsed.spans = spans


parse_episodes = collect(stream_episodes)


@streaming
def stream_jsonl(path: Path, parsed: Parsed, source: str = "jsonl") -> Iterator[Episode]:
    spans = SpanCollector()
    sessions = SessionTable(parsed.spool)
    for no, obj in iter_objects(path, parsed):
        try:
            _message(path, parsed, sessions, source, no, obj)
        except Exception as exc:  # noqa: BLE001 - one line's failure is that line's error
            line_failed(parsed, path, no, exc)
    for b in sessions.builders():
        yield from b.finish(parsed, spans)
    parsed.spans = spans.spans()


parse_jsonl = collect(stream_jsonl)


def _message(path: Path, parsed: Parsed, sessions: SessionTable, source: str, no: int, obj: dict) -> None:
    """Read one generic message line into its session."""
    content = obj.get("content")
    if isinstance(content, list):
        content = block_text(content)
    if not isinstance(content, str):
        parsed.bad(path, no, "content: expected a string")
        return
    role = str(obj.get("role") or "user")
    hints = Hints()
    text = strip_envelope(content, hints) if role == "user" else content.strip()
    if is_noise(text):
        return
    session = str(obj.get("session_id") or storable(path.stem))
    b = sessions.get(session)
    if b is None:
        b = sessions.add(session, SessionBuilder(path, source, session, agent=str(obj.get("agent") or ""),
                                                 channel=str(obj.get("channel") or ""), spool=parsed.spool))
    if role == "user":
        hints.requests.append(text)
    b.add(Msg(no, role, role_line(role, text), to_datetime(obj.get("timestamp")), hints))


# Each format as a stream (episodes as they are complete: what ingestion
# uses) and as a parser (the whole file in one ``Parsed``).
STREAMS: dict[str, Stream] = {
    "openclaw": stream_openclaw,
    "claude-code": stream_claude_code,
    "hermes": stream_hermes,
    "markdown": stream_markdown,
    "episodes": stream_episodes,
    "jsonl": stream_jsonl,
}

PARSERS: dict[str, Callable[[Path], Parsed]] = {
    "openclaw": parse_openclaw,
    "claude-code": parse_claude_code,
    "hermes": parse_hermes,
    "markdown": parse_markdown,
    "episodes": parse_episodes,
    "jsonl": parse_jsonl,
}

MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx")
_SNIFF_LINES = 20
_SNIFF_LINE_BYTES = 1024 * 1024
_SNIFF_LONG_CHUNKS = 16  # a long first line is searched this many MB deep for its keys
_CLAUDE_TYPES = {"user", "assistant", "summary", "system", "file-history-snapshot", "progress",
                 "queue-operation", "custom-title"}
# For a first line too long to parse whole: its opening keys still tell.
_PREFIX_RULES = [
    (re.compile(rb'^\{\s*"type"\s*:\s*"session"'), "openclaw"),
    (re.compile(rb'"parentUuid"\s*:|"sessionId"\s*:\s*"[^"]*"\s*,\s*"version"'), "claude-code"),
    (re.compile(rb'"messages"\s*:\s*\[|"started_at"\s*:\s*[\d.]+\s*,|"tool_call_count"\s*:'), "hermes"),
]


def classify(obj: Any) -> str | None:
    """The format one parsed JSONL object belongs to, or None when it does not tell."""
    if not isinstance(obj, dict):
        return None
    kind = obj.get("type")
    if kind == "session" and ("version" in obj or "cwd" in obj):
        return "openclaw"
    if kind in ("message", "compaction", "model_change", "thinking_level_change", "branch_summary",
                "session_info", "custom_message") and "parentId" in obj:
        return "openclaw"
    if isinstance(obj.get("messages"), list):
        return "hermes"
    if kind in _CLAUDE_TYPES and ("sessionId" in obj or "uuid" in obj or "leafUuid" in obj
                                  or "parentUuid" in obj or "messageId" in obj):
        return "claude-code"
    if "id" in obj and "text" in obj:
        return "episodes"
    if "role" in obj and "content" in obj:
        return "jsonl"
    return None


def detect_format(path: Path) -> str:
    """Guess a file's format: ``.md`` is Markdown, else sniff the first JSONL
    lines (bounded reads; a binary, unreadable or non-regular file falls to
    ``jsonl``, whose parser reports it; a line with a NUL byte tells nothing)."""
    path = Path(path)
    if path.suffix.lower() in MARKDOWN_SUFFIXES:
        return "markdown"
    try:
        with open_regular(path) as fh:
            return _sniff(fh) or "jsonl"
    except (OSError, ValueError, RecursionError, MemoryError):
        return "jsonl"


def _sniff(fh: Any) -> str | None:
    seen = 0
    while seen < _SNIFF_LINES:
        raw = fh.readline(_SNIFF_LINE_BYTES)
        if not raw:
            return None
        if not raw.strip():
            continue
        seen += 1
        complete = raw.endswith(b"\n") or len(raw) < _SNIFF_LINE_BYTES
        if complete:
            if b"\x00" in raw:
                continue
            try:
                kind = classify(json.loads(raw.decode("utf-8").lstrip("\ufeff")))
            except (ValueError, RecursionError):  # ValueError: bad JSON, bad UTF-8, a 5,000-digit number
                kind = None
            if kind:
                return kind
            continue
        # a long line: look for telling keys chunk by chunk (bounded)
        tail = b""
        for _ in range(_SNIFF_LONG_CHUNKS):
            window = tail + raw
            for rule, kind in _PREFIX_RULES:
                if rule.search(window):
                    return kind
            if not raw or raw.endswith(b"\n"):
                break
            tail = raw[-256:]
            raw = fh.readline(_SNIFF_LINE_BYTES)
        while raw and not raw.endswith(b"\n"):  # skip the rest of the long line
            raw = fh.readline(_SNIFF_LINE_BYTES)
    return None
