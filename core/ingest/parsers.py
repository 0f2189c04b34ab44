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
from typing import Any, Callable

from pydantic import ValidationError

from ..errors import first_error
from ..models import Episode
from .formats import parse_claude_code, parse_hermes, parse_markdown, parse_openclaw
from .formats.common import (
    GAP_SECONDS, MAX_EPISODE_CHARS, MAX_LINE_BYTES, Malformed, Msg, Parsed, SessionBuilder, SpanCollector,
    block_text, guarded, is_noise, iter_objects, role_line, strip_envelope, to_datetime,
)
from ..enrich.extract import Hints

__all__ = [
    "GAP_SECONDS", "MAX_EPISODE_CHARS", "MAX_LINE_BYTES", "Malformed", "PARSERS", "Parsed", "detect_format",
    "parse_claude_code", "parse_episodes", "parse_hermes", "parse_jsonl", "parse_markdown", "parse_openclaw",
    "to_datetime",
]


def _err(exc: ValidationError) -> str:
    return first_error(exc, "line")


@guarded
def parse_episodes(path: Path) -> Parsed:
    parsed = Parsed()
    for no, obj in iter_objects(path, parsed):
        try:
            ep = Episode.model_validate(obj)
        except ValidationError as exc:
            parsed.bad(path, no, _err(exc))
            continue
        parsed.episodes.append(ep)
        parsed.spans.append((no, no, ep.id))
    return parsed


@guarded
def parse_jsonl(path: Path, source: str = "jsonl") -> Parsed:
    parsed = Parsed()
    spans = SpanCollector()
    sessions: dict[str, SessionBuilder] = {}
    for no, obj in iter_objects(path, parsed):
        content = obj.get("content")
        if isinstance(content, list):
            content = block_text(content)
        if not isinstance(content, str):
            parsed.bad(path, no, "content: expected a string")
            continue
        role = str(obj.get("role") or "user")
        hints = Hints()
        text = strip_envelope(content, hints) if role == "user" else content.strip()
        if is_noise(text):
            continue
        session = str(obj.get("session_id") or path.stem)
        b = sessions.get(session)
        if b is None:
            b = sessions[session] = SessionBuilder(path, source, session, agent=str(obj.get("agent") or ""),
                                                   channel=str(obj.get("channel") or ""))
        if role == "user":
            hints.requests.append(text)
        b.add(Msg(no, role, role_line(role, text), to_datetime(obj.get("timestamp")), hints))
    for b in sessions.values():
        b.finish(parsed, spans)
    parsed.spans = spans.spans()
    return parsed


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
    lines (bounded reads; a binary or unreadable file falls to ``jsonl``, whose
    parser reports it)."""
    path = Path(path)
    if path.suffix.lower() in MARKDOWN_SUFFIXES:
        return "markdown"
    try:
        with open(path, "rb") as fh:
            seen = 0
            while seen < _SNIFF_LINES:
                raw = fh.readline(_SNIFF_LINE_BYTES)
                if not raw:
                    break
                if b"\x00" in raw:
                    break
                if not raw.strip():
                    continue
                seen += 1
                complete = raw.endswith(b"\n") or len(raw) < _SNIFF_LINE_BYTES
                if complete:
                    try:
                        kind = classify(json.loads(raw.decode("utf-8").lstrip("\ufeff")))
                    except (ValueError, RecursionError):
                        kind = None
                    if kind:
                        return kind
                else:
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
    except OSError:
        pass
    return "jsonl"
