"""Markdown memory files: OpenClaw's ``MEMORY.md`` and ``memory/YYYY-MM-DD.md``
(and any Markdown notes).

One episode a heading section (text before the first heading is a section
too; a heading with no text under it is skipped; a very long section is cut
at paragraph breaks). The section's text starts with its heading trail
(``Parent / Child``), which also makes its summary.

Front matter (``---`` … ``---`` at the top, ``key: value`` lines and ``-``
lists) is honoured: ``title``, ``date`` / ``created`` / ``updated``,
``tags`` / ``topics``, ``agent``, ``channel``, ``people``. Broken front
matter is reported with its line and the rest of the file is still read:
an unclosed block is read as text; a line that is not ``key: value`` is
skipped.

Dates: a date in the section's heading trail (``## 2026-03-05``, ``# Session:
2026-03-18 03:24:55 UTC``), else the front matter's, else one at the start of
the file name (``2026-03-05.md``, ``2026-03-05-topic.md``), else none.

Ids: ``<source>:<session_id>:<n>``. Files under a ``.openclaw`` directory
have source ``openclaw`` and session id their path below ``.openclaw``
without suffix (``workspace/memory/2026-03-05``), stable wherever the home
directory is; other files have source ``manual`` and session id
``<stem>-<8 hex of the absolute path>``, stable while the file stays put.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ...enrich.extract import Hints
from ...models import Episode
from .common import (
    MAX_EPISODE_CHARS, Parsed, SpanCollector, decode_line, guarded, is_noise, iter_lines, strip_envelope,
    to_datetime,
)
from ...enrich.extract import enrich_deterministic

MAX_FRONT_MATTER_LINES = 200
MAX_SECTION_CHARS = 2 * MAX_EPISODE_CHARS

_HEADING_RE = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_FENCE_RE = re.compile(r"^\s{0,3}(```|~~~)")
_DATE_RE = re.compile(r"(\d{4}-\d{2}-\d{2})(?:[ T](\d{1,2}:\d{2}(?::\d{2})?)(?:\s*(UTC|Z|[+-]\d{2}:?\d{2}))?)?")
_FM_KEY_RE = re.compile(r"^([A-Za-z_][\w-]*)\s*:(?:\s+(.*)|\s*)$")
_FM_ITEM_RE = re.compile(r"^\s+-\s+(.*)$|^-\s+(.*)$")
_BULLET_FIELD_RE = re.compile(r"^\s*-\s*\*\*(Session Key|Session ID|Source)\*\*:\s*(.+?)\s*$", re.M)
_TRANSCRIPT_LINE_RE = re.compile(r"^(user|assistant): ?(.*)$")


@dataclass
class _Section:
    trail: list[str]
    first_line: int
    lines: list[tuple[int, str]] = field(default_factory=list)  # (line number, text)


def _ids(path: Path) -> tuple[str, str, str]:
    """(source, session id, agent) of a Markdown file."""
    resolved = path.resolve()
    parts = resolved.parts
    if ".openclaw" in parts:
        i = len(parts) - 1 - parts[::-1].index(".openclaw")
        rel = list(parts[i + 1 :])
        rel[-1] = Path(rel[-1]).stem
        agent = ""
        if rel and rel[0] == "workspace":
            agent = "main"
        elif rel and rel[0].startswith("workspace-"):
            agent = rel[0][len("workspace-"):]
        elif len(rel) > 1 and rel[0] == "agents":
            agent = rel[1]
        return "openclaw", "/".join(rel), agent
    digest = hashlib.sha1(str(resolved).encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return "manual", f"{path.stem}-{digest}", ""


def _date(text: str) -> datetime | None:
    m = _DATE_RE.search(text)
    if not m:
        return None
    day, clock, zone = m.groups()
    try:
        if clock:
            dt = datetime.fromisoformat(f"{day}T{clock if clock.count(':') == 2 else clock + ':00'}")
        else:
            dt = datetime.fromisoformat(day)
    except ValueError:
        return None
    if zone and zone not in ("UTC", "Z"):
        try:
            z = zone if ":" in zone else f"{zone[:3]}:{zone[3:]}"
            return dt.replace(tzinfo=datetime.fromisoformat(f"2000-01-01T00:00:00{z}").tzinfo)
        except ValueError:
            pass
    return dt.replace(tzinfo=timezone.utc)


def _value(raw: str) -> Any:
    v = raw.strip()
    if v.startswith("[") and v.endswith("]"):
        return [_value(x) for x in v[1:-1].split(",") if x.strip()]
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
        return v[1:-1]
    if " #" in v:
        v = v.split(" #", 1)[0].rstrip()
    return v


def _front_matter(block: list[tuple[int, str]], path: Path, parsed: Parsed) -> dict[str, Any]:
    """Parse ``key: value`` lines and ``-`` lists; a bad line is reported and skipped."""
    out: dict[str, Any] = {}
    key: str | None = None
    for no, line in block:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = _FM_KEY_RE.match(line)
        if m and not line[0].isspace():
            key = m.group(1)
            raw = m.group(2)
            if raw is None or not raw.strip():
                out[key] = []
            else:
                v = raw.strip()
                if v.startswith("[") and not v.endswith("]") or v.count('"') % 2 or v.startswith("'") and v.count("'") % 2:
                    parsed.bad(path, no, f"front matter: unterminated value for {key!r}; key skipped")
                    out.pop(key, None)
                    key = None
                    continue
                out[key] = _value(v)
            continue
        item = _FM_ITEM_RE.match(line)
        if item and key is not None and isinstance(out.get(key), list):
            out[key].append(_value(item.group(1) or item.group(2) or ""))
            continue
        if line[0].isspace() and key is not None and isinstance(out.get(key), str):
            out[key] = f"{out[key]} {line.strip()}"  # a folded continuation line
            continue
        parsed.bad(path, no, f"front matter: expected 'key: value', got {line.strip()[:40]!r}; line skipped")
    return out


def _as_list(v: Any) -> list[str]:
    if isinstance(v, list):
        return [str(x).strip() for x in v if str(x).strip()]
    if isinstance(v, str) and v.strip():
        return [x.strip() for x in v.split(",") if x.strip()]
    return []


@guarded
def parse_markdown(path: Path) -> Parsed:
    parsed = Parsed()
    spans = SpanCollector()
    source, session_id, agent = _ids(path)

    # Read every line once (decoded; a line of invalid UTF-8 is reported and
    # read as blank), taking the front matter off the top.
    body: list[tuple[int, str]] = []
    fm_block: list[tuple[int, str]] | None = None
    fm_closed = False
    for no, raw in iter_lines(path, parsed):
        try:
            line = decode_line(raw, no).rstrip("\r\n")
        except UnicodeDecodeError as exc:
            parsed.bad(path, no, f"invalid UTF-8 at byte {exc.start}; line read as blank")
            line = ""
        if no == 1 and line.strip() == "---":
            fm_block = []
            continue
        if fm_block is not None and not fm_closed:
            if line.strip() in ("---", "..."):
                fm_closed = True
                continue
            fm_block.append((no, line))
            if len(fm_block) <= MAX_FRONT_MATTER_LINES:
                continue
            # far too long for front matter: it was never closed
            parsed.bad(path, 1, f"front matter opened on line 1 has no closing '---' within "
                                f"{MAX_FRONT_MATTER_LINES} lines; read as text")
            body.extend(fm_block)
            fm_block, fm_closed = None, True
            continue
        body.append((no, line))
    front: dict[str, Any] = {}
    if fm_block is not None and not fm_closed:
        parsed.bad(path, 1, "front matter opened on line 1 is never closed with '---'; read as text")
        body = fm_block + body
    elif fm_block is not None:
        front = _front_matter(fm_block, path, parsed)

    # Split into heading sections (headings inside code fences do not count).
    sections: list[_Section] = []
    trail: list[tuple[int, str]] = []  # (level, title)
    cur = _Section([], body[0][0] if body else 1)
    in_fence = False
    for no, line in body:
        if _FENCE_RE.match(line):
            in_fence = not in_fence
        m = None if in_fence else _HEADING_RE.match(line)
        if m:
            sections.append(cur)
            level = len(m.group(1))
            trail = [t for t in trail if t[0] < level] + [(level, m.group(2).strip())]
            cur = _Section([t for _, t in trail], no)
            cur.lines.append((no, line))
        else:
            cur.lines.append((no, line))
    sections.append(cur)

    # Front matter and file-name context.
    title = str(front.get("title") or "").strip()
    fm_date = None
    for key in ("date", "created", "updated"):
        if front.get(key):
            fm_date = to_datetime(str(front[key])) or _date(str(front[key]))
            if fm_date:
                break
    file_date = _date(path.stem) if re.match(r"^\d{4}-\d{2}-\d{2}", path.stem) else None
    topics = _as_list(front.get("tags")) + _as_list(front.get("topics"))
    people = _as_list(front.get("people")) + _as_list(front.get("person"))
    agent = str(front.get("agent") or agent or "")
    channel = str(front.get("channel") or "")

    index = 0
    prev: str | None = None
    for sec in sections:
        for chunk in _chunks(sec):
            text = _clean("\n".join(t for _, t in chunk))
            if not _has_body(text, sec.trail):
                continue
            heading = " / ".join(sec.trail)
            ts = next((d for d in map(_date, reversed(sec.trail)) if d), None) or fm_date or file_date
            eid = f"{source}:{session_id}:{index}"
            meta: dict[str, Any] = {"path": str(path), "heading": heading, "lines": [chunk[0][0], chunk[-1][0]]}
            if title:
                meta["title"] = title
            if prev:
                meta["prev"] = prev
            hints = Hints(title=heading or title, people=list(people),
                          channels=[channel] if channel else [], requests=[_first_paragraph(text, sec.trail)])
            for key, value in _BULLET_FIELD_RE.findall(text):
                if key == "Source" and not channel:
                    hints.channels.append(value)
                elif key == "Session Key" and value.startswith("agent:") and not agent:
                    meta["session_key"] = value
            ep = Episode(
                id=eid, source=source, session_id=session_id, agent=agent,  # type: ignore[arg-type]
                channel=channel or (hints.channels[0] if hints.channels else ""), text=text,
                first_ts=ts, last_ts=ts, message_count=1, meta=meta,
            )
            ep = enrich_deterministic(ep, hints)
            if topics:
                ep.topics = list(dict.fromkeys(topics + ep.topics))[:12]
            parsed.episodes.append(ep)
            spans.add_range(chunk[0][0], chunk[-1][0], eid)
            prev = eid
            index += 1
    parsed.spans = spans.spans()
    return parsed


def _chunks(sec: _Section) -> list[list[tuple[int, str]]]:
    """The section, cut at blank lines into pieces of at most MAX_SECTION_CHARS."""
    lines = sec.lines
    if sum(len(t) + 1 for _, t in lines) <= MAX_SECTION_CHARS:
        return [lines] if lines else []
    out: list[list[tuple[int, str]]] = []
    cur: list[tuple[int, str]] = []
    size = 0
    for no, t in lines:
        if size > MAX_EPISODE_CHARS and not t.strip() or size > MAX_SECTION_CHARS:
            out.append(cur)
            cur, size = [], 0
            if sec.trail:  # later pieces repeat the heading so they read alone
                cur.append((no, "#" * min(len(sec.trail), 6) + " " + sec.trail[-1] + " (continued)"))
        cur.append((no, t))
        size += len(t) + 1
    if cur:
        out.append(cur)
    return out


def _clean(text: str) -> str:
    """Drop metadata envelopes and noise lines (heartbeats, NO_REPLY) that
    OpenClaw's session-memory files copy from transcripts."""
    s = strip_envelope(text) if "(untrusted" in text or "[[" in text else text
    if "user:" in s or "assistant:" in s:
        kept = []
        for line in s.splitlines():
            m = _TRANSCRIPT_LINE_RE.match(line)
            if m and is_noise(m.group(2)):
                continue
            kept.append(line)
        s = "\n".join(kept)
    return s.strip()


def _has_body(text: str, trail: list[str]) -> bool:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        return False
    return not (len(lines) == 1 and _HEADING_RE.match(lines[0]))


def _first_paragraph(text: str, trail: list[str]) -> str:
    for line in text.splitlines():
        s = line.strip()
        if not s or _HEADING_RE.match(s) or _BULLET_FIELD_RE.match(s):
            continue
        return s.lstrip("-*> ").strip()
    return ""
