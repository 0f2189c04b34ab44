"""A message's text: what to keep of it, and how it reads in an episode.

* The noise filter (``is_noise``): heartbeats, ``NO_REPLY``, session-start
  prompts, empty messages; ``strip_envelope`` removes metadata envelopes,
  passing the names in them to the enrichment ``Hints``.
* Content blocks (``blocks``, ``block_text``), tool arguments
  (``tool_args``, ``render_args``) and timestamps (``to_datetime``) as the
  formats store them.
* The lines an episode's text is made of: ``role_line``, ``tool_line``,
  ``result_line``.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from typing import Any, Iterator

from core.enrich.hints import Hints
from core.enrich.summary import clip
from core.ingest.formats.lines import loads

# A tool call's arguments and a tool's output are cut to this much in an episode
# (the raw file keeps it all).
MAX_TOOL_RESULT_CHARS = 2000
MAX_TOOL_ARG_CHARS = 300


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


def blocks(content: Any) -> Iterator[dict]:
    """The content blocks of a message; a bare string is one text block."""
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict):
            yield block
