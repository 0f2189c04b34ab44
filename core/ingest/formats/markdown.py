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
from datetime import datetime, timezone
from itertools import chain
from pathlib import Path
from typing import Any, Iterable, Iterator

from core.enrich.extract import enrich_deterministic
from core.enrich.hints import Hints
from core.models import Episode
from core.ingest.formats.lines import collect, decode_line, iter_lines, nul_error, streaming
from core.ingest.formats.message_text import is_noise, strip_envelope, to_datetime
from core.ingest.formats.parsed import Parsed, describe, storable
from core.ingest.formats.sessions import MAX_EPISODE_CHARS, MAX_MESSAGE_CHARS, SpanCollector

MAX_FRONT_MATTER_LINES = 200
MAX_SECTION_CHARS = 2 * MAX_EPISODE_CHARS
# A front matter line longer than this is skipped: values are titles, dates and tags.
MAX_FRONT_MATTER_LINE = 4096
# Brackets nested deeper than this in a front matter value: the key is skipped
# (``[[[[…`` a thousand deep would otherwise exhaust the recursion limit).
MAX_FRONT_MATTER_NESTING = 8

_FENCE_RE = re.compile(r"^\s{0,3}(```|~~~)")
_DATE_RE = re.compile(r"(\d{4}-\d{2}-\d{2})(?:[ T](\d{1,2}:\d{2}(?::\d{2})?)(?:\s*(UTC|Z|[+-]\d{2}:?\d{2}))?)?")
_FM_KEY_RE = re.compile(r"^([A-Za-z_][\w-]*)\s*:(?:\s+(.*)|\s*)$")
_FM_ITEM_RE = re.compile(r"^\s+-\s+(.*)$|^-\s+(.*)$")
# Linear: blanks are [ \t] (``\s`` would span lines under re.M), and the
# value ends at its last non-blank (a lazy ``.+?`` before ``\s*$`` tries every
# split of a run of blanks).
_BULLET_FIELD_RE = re.compile(r"^[ \t]*-[ \t]*\*\*(Session Key|Session ID|Source)\*\*:[ \t]*(.*\S)[ \t]*$", re.M)
_TRANSCRIPT_LINE_RE = re.compile(r"^(user|assistant): ?(.*)$")


def heading(line: str) -> tuple[int, str] | None:
    """(level, title) of an ATX heading line (``## Title ##``), else None.

    Read with string operations: the regex this replaces,
    ``^(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$``, tried every split of a run of
    blanks between its lazy title and its optional closing hashes, so ``# a``,
    2,000 spaces and ``b`` took seconds."""
    level = len(line) - len(line.lstrip("#"))
    if not 1 <= level <= 6 or len(line) == level or line[level] not in " \t":
        return None
    # the title without the closing sequence: blanks, then #s, then blanks, from the end
    return level, line[level:].strip(" \t").rstrip("#").rstrip(" \t")


class _TooDeep(ValueError):
    pass


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
        return "openclaw", storable("/".join(rel)), storable(agent)
    digest = hashlib.sha1(str(resolved).encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return "manual", f"{storable(path.stem)}-{digest}", ""


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


def _value(raw: str, depth: int = 0) -> Any:
    v = raw.strip()
    if v.startswith("[") and v.endswith("]"):
        if depth >= MAX_FRONT_MATTER_NESTING:
            raise _TooDeep(f"lists nested deeper than {MAX_FRONT_MATTER_NESTING}")
        return [_value(x, depth + 1) for x in v[1:-1].split(",") if x.strip()]
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
        if len(line) > MAX_FRONT_MATTER_LINE:
            parsed.bad(path, no, f"front matter: line longer than {MAX_FRONT_MATTER_LINE} characters; line skipped")
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
                try:
                    out[key] = _value(v)
                except _TooDeep as exc:
                    parsed.bad(path, no, f"front matter: value of {key!r} has {exc}; key skipped")
                    out.pop(key, None)
                    key = None
            continue
        item = _FM_ITEM_RE.match(line)
        if item and key is not None and isinstance(out.get(key), list):
            try:
                out[key].append(_value(item.group(1) or item.group(2) or ""))
            except _TooDeep as exc:
                parsed.bad(path, no, f"front matter: item of {key!r} has {exc}; item skipped")
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


@streaming
def stream_markdown(path: Path, parsed: Parsed) -> Iterator[Episode]:
    """One episode a heading section (or a piece of a long one), as each
    section ends: the file is read once, line by line."""
    spans = SpanCollector()
    front, body = _split_front_matter(_text_lines(path, parsed), path, parsed)
    doc = _Document(path, front)
    for trail, chunk in _section_chunks(body):
        try:
            ep = doc.episode(trail, chunk)
        except Exception as exc:  # noqa: BLE001 - one section's failure is its lines' error
            parsed.bad(path, chunk[0][0], f"cannot read the section of lines {chunk[0][0]}-{chunk[-1][0]}: "
                                          f"{describe(exc)}; skipped")
            continue
        if ep is not None:
            spans.add_range(chunk[0][0], chunk[-1][0], ep.id)
            yield ep
    parsed.spans = spans.spans()


parse_markdown = collect(stream_markdown)


def _text_lines(path: Path, parsed: Parsed) -> Iterator[tuple[int, str]]:
    """(line number, text) of every line. A line of invalid UTF-8 or with a
    NUL byte is reported and read as blank; a very long line is cut to
    MAX_MESSAGE_CHARS, as a transcript message is (the file keeps it all)."""
    for no, raw in iter_lines(path, parsed):
        if b"\x00" in raw:
            parsed.bad(path, no, nul_error(raw).replace("line skipped", "line read as blank"))
            yield no, ""
            continue
        try:
            line = decode_line(raw, no).rstrip("\r\n")
        except UnicodeDecodeError as exc:
            parsed.bad(path, no, f"invalid UTF-8 at byte {exc.start}; line read as blank")
            line = ""
        if len(line) > MAX_MESSAGE_CHARS:
            line = line[: MAX_MESSAGE_CHARS - 1] + "…"
        yield no, line


def _split_front_matter(lines: Iterator[tuple[int, str]], path: Path,
                        parsed: Parsed) -> tuple[dict[str, Any], Iterable[tuple[int, str]]]:
    """The front matter (``---`` on line 1 … ``---``) and the body's lines.
    Broken front matter (never closed, or longer than MAX_FRONT_MATTER_LINES)
    is reported and read as text."""
    first = next(lines, None)
    if first is None:
        return {}, ()
    if first[1].strip() != "---":
        return {}, chain([first], lines)
    block: list[tuple[int, str]] = []
    for no, line in lines:
        if line.strip() in ("---", "..."):
            return _front_matter(block, path, parsed), lines
        block.append((no, line))
        if len(block) > MAX_FRONT_MATTER_LINES:
            parsed.bad(path, 1, f"front matter opened on line 1 has no closing '---' within "
                                f"{MAX_FRONT_MATTER_LINES} lines; read as text")
            return {}, chain(block, lines)
    parsed.bad(path, 1, "front matter opened on line 1 is never closed with '---'; read as text")
    return {}, block


def _section_chunks(body: Iterable[tuple[int, str]]) -> Iterator[tuple[list[str], list[tuple[int, str]]]]:
    """(heading trail, lines) of each section piece, as soon as it is complete.
    Headings inside code fences do not count."""
    trail: list[tuple[int, str]] = []  # (level, title)
    cutter = _Cutter([])
    in_fence = False
    for no, line in body:
        if _FENCE_RE.match(line):
            in_fence = not in_fence
        h = None if in_fence else heading(line)
        if h is not None:
            yield from cutter.close()
            level, title = h
            trail = [t for t in trail if t[0] < level] + [(level, title.strip())]
            cutter = _Cutter([t for _, t in trail])
        yield from cutter.add(no, line)
    yield from cutter.close()


class _Cutter:
    """One section's lines, cut into pieces of at most MAX_SECTION_CHARS at
    blank lines. A section that fits is one piece; one that does not is cut
    as its lines arrive, so a huge section never sits in memory whole."""

    def __init__(self, trail: list[str]):
        self.trail = trail
        self.lines: list[tuple[int, str]] = []
        self.size = 0
        self.cutting = False  # the section is too long: pieces go out as they fill

    def add(self, no: int, line: str) -> Iterator[tuple[list[str], list[tuple[int, str]]]]:
        if self.cutting:
            yield from self._cut(no, line)
            return
        self.lines.append((no, line))
        self.size += len(line) + 1
        if self.size > MAX_SECTION_CHARS:
            # too long to be one piece: cut what is here as if cutting from the start
            held, self.lines, self.size, self.cutting = self.lines, [], 0, True
            for n, t in held:
                yield from self._cut(n, t)

    def _cut(self, no: int, line: str) -> Iterator[tuple[list[str], list[tuple[int, str]]]]:
        if self.size > MAX_EPISODE_CHARS and not line.strip() or self.size > MAX_SECTION_CHARS:
            yield self.trail, self.lines
            self.lines, self.size = [], 0
            if self.trail:  # later pieces repeat the heading so they read alone
                self.lines.append((no, "#" * min(len(self.trail), 6) + " " + self.trail[-1] + " (continued)"))
        self.lines.append((no, line))
        self.size += len(line) + 1

    def close(self) -> Iterator[tuple[list[str], list[tuple[int, str]]]]:
        if self.lines:
            yield self.trail, self.lines
        self.lines = []


class _Document:
    """What a file's sections share: ids, front matter, dates from the file
    name; and the episode chain (``meta["prev"]``) so far."""

    def __init__(self, path: Path, front: dict[str, Any]):
        self.path = path
        self.source, self.session_id, agent = _ids(path)
        self.title = str(front.get("title") or "").strip()
        self.fm_date = None
        for key in ("date", "created", "updated"):
            if front.get(key):
                self.fm_date = to_datetime(str(front[key])) or _date(str(front[key]))
                if self.fm_date:
                    break
        self.file_date = _date(path.stem) if re.match(r"^\d{4}-\d{2}-\d{2}", path.stem) else None
        self.topics = _as_list(front.get("tags")) + _as_list(front.get("topics"))
        self.people = _as_list(front.get("people")) + _as_list(front.get("person"))
        self.agent = str(front.get("agent") or agent or "")
        self.channel = str(front.get("channel") or "")
        self.index = 0
        self.prev: str | None = None

    def episode(self, trail: list[str], chunk: list[tuple[int, str]]) -> Episode | None:
        """The episode of one section piece; None when it has no body."""
        text = _clean("\n".join(t for _, t in chunk))
        if not _has_body(text, trail):
            return None
        heading_trail = " / ".join(trail)
        ts = next((d for d in map(_date, reversed(trail)) if d), None) or self.fm_date or self.file_date
        eid = f"{self.source}:{self.session_id}:{self.index}"
        meta: dict[str, Any] = {"path": storable(str(self.path)), "heading": heading_trail,
                                "lines": [chunk[0][0], chunk[-1][0]]}
        if self.title:
            meta["title"] = self.title
        if self.prev:
            meta["prev"] = self.prev
        hints = Hints(title=heading_trail or self.title, people=list(self.people),
                      channels=[self.channel] if self.channel else [], requests=[_first_paragraph(text, trail)])
        for key, value in _BULLET_FIELD_RE.findall(text):
            if key == "Source" and not self.channel:
                hints.channels.append(value)
            elif key == "Session Key" and value.startswith("agent:") and not self.agent:
                meta["session_key"] = value
        ep = Episode(
            id=eid, source=self.source, session_id=self.session_id, agent=self.agent,  # type: ignore[arg-type]
            channel=self.channel or (hints.channels[0] if hints.channels else ""), text=text,
            first_ts=ts, last_ts=ts, message_count=1, meta=meta,
        )
        ep = enrich_deterministic(ep, hints)
        if self.topics:
            ep.topics = list(dict.fromkeys(self.topics + ep.topics))[:12]
        self.prev = eid
        self.index += 1
        return ep


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
    return not (len(lines) == 1 and heading(lines[0]))


def _first_paragraph(text: str, trail: list[str]) -> str:
    for line in text.splitlines():
        s = line.strip()
        if not s or heading(s) or _BULLET_FIELD_RE.match(s):
            continue
        return s.lstrip("-*> ").strip()
    return ""
