"""File formats -> episodes, with the line span each episode came from.

A malformed line is reported with its line number and never stops the file;
a file-level problem (binary, empty, unreadable) is one report with line 0.

Formats (``PARSERS``):

* ``openclaw``: OpenClaw / pi session JSONL (``formats/openclaw.py``);
* ``claude-code``: Claude Code transcripts and subagent files (``formats/claude_code.py``);
* ``hermes``: ``hermes sessions export`` JSONL (``formats/hermes.py``);
* ``markdown``: MEMORY.md, memory/YYYY-MM-DD.md, notes (``formats/markdown.py``);
* ``episodes``, ``jsonl``: one episode, or one generic message, a line (``formats/generic.py``).

``detect_format`` sniffs the first lines (``.md`` files are Markdown).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable

from core.memory.sources import open_regular
from core.ingest.formats.claude_code import parse_claude_code, stream_claude_code
from core.ingest.formats.generic import parse_episodes, parse_jsonl, stream_episodes, stream_jsonl
from core.ingest.formats.hermes import parse_hermes, stream_hermes
from core.ingest.formats.lines import Stream
from core.ingest.formats.markdown import parse_markdown, stream_markdown
from core.ingest.formats.openclaw import parse_openclaw, stream_openclaw
from core.ingest.formats.parsed import Parsed

__all__ = ["PARSERS", "STREAMS", "classify", "detect_format"]


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
