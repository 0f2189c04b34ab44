"""File formats -> episodes, with the line span each episode came from.

A malformed line is reported with its line number and never stops the file.
Formats here: ``episodes`` (one Episode object a line) and ``jsonl`` (one
message a line: role, content, timestamp, session_id). The agent transcript
formats plug in beside them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from pydantic import ValidationError

from ..models import Episode

# A session's messages become a new episode after this much silence or text.
GAP_SECONDS = 30 * 60
MAX_EPISODE_CHARS = 6000


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


def _lines(path: Path, parsed: Parsed) -> Iterator[tuple[int, Any]]:
    """(line number, JSON object) for each good line; the rest go to malformed."""
    with open(path, "rb") as fh:
        for no, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError as exc:
                parsed.malformed.append(Malformed(str(path), no, f"invalid UTF-8 at byte {exc.start}"))
                continue
            except json.JSONDecodeError as exc:
                parsed.malformed.append(Malformed(str(path), no, f"invalid JSON: {exc.msg} (column {exc.colno})"))
                continue
            if not isinstance(obj, dict):
                parsed.malformed.append(Malformed(str(path), no, f"expected a JSON object, got {type(obj).__name__}"))
                continue
            yield no, obj


def _err(exc: ValidationError) -> str:
    e = exc.errors()[0]
    where = ".".join(str(p) for p in e["loc"]) or "line"
    return f"{where}: {e['msg']}"


def parse_episodes(path: Path) -> Parsed:
    parsed = Parsed()
    for no, obj in _lines(path, parsed):
        try:
            ep = Episode.model_validate(obj)
        except ValidationError as exc:
            parsed.malformed.append(Malformed(str(path), no, _err(exc)))
            continue
        parsed.episodes.append(ep)
        parsed.spans.append((no, no, ep.id))
    return parsed


def to_datetime(value: Any) -> datetime | None:
    if value in (None, ""):
        return None
    if isinstance(value, (int, float)):
        secs = value / 1000 if value > 1e11 else value  # epoch ms or s
        return datetime.fromtimestamp(secs, tz=timezone.utc)
    try:
        dt = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


@dataclass
class _Open:
    session: str
    part: int
    lines: list[int] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    first: datetime | None = None
    last: datetime | None = None
    size: int = 0


def parse_jsonl(path: Path, source: str = "jsonl") -> Parsed:
    parsed = Parsed()
    open_: dict[str, _Open] = {}
    prev_id: dict[str, str] = {}

    def close(o: _Open) -> None:
        if not o.texts:
            return
        eid = f"{source}:{o.session}:{o.part}"
        meta: dict[str, Any] = {"path": str(path)}
        if o.session in prev_id:
            meta["prev"] = prev_id[o.session]
        prev_id[o.session] = eid
        parsed.episodes.append(Episode(
            id=eid, source=source, session_id=o.session, text="\n".join(o.texts),
            first_ts=o.first, last_ts=o.last, message_count=len(o.texts), meta=meta,
        ))
        for ln in o.lines:
            parsed.spans.append((ln, ln, eid))

    for no, obj in _lines(path, parsed):
        content = obj.get("content")
        if not isinstance(content, str):
            parsed.malformed.append(Malformed(str(path), no, "content: expected a string"))
            continue
        if not content.strip():
            continue
        session = str(obj.get("session_id") or path.stem)
        ts = to_datetime(obj.get("timestamp"))
        role = str(obj.get("role") or "user")
        o = open_.get(session)
        gap = o is not None and o.last is not None and ts is not None and (ts - o.last).total_seconds() > GAP_SECONDS
        if o is None or gap or o.size > MAX_EPISODE_CHARS:
            if o is not None:
                close(o)
            o = open_[session] = _Open(session, 0 if o is None else o.part + 1)
        o.lines.append(no)
        o.texts.append(f"{role}: {content}")
        o.size += len(content)
        o.first = o.first or ts
        o.last = ts or o.last
    for o in open_.values():
        close(o)
    return parsed


PARSERS = {"episodes": parse_episodes, "jsonl": parse_jsonl}


def detect_format(path: Path) -> str:
    """Guess a JSONL file's format from its first object."""
    with open(path, "rb") as fh:
        for raw in fh:
            if raw.strip():
                try:
                    obj = json.loads(raw)
                except ValueError:
                    break
                if isinstance(obj, dict) and "id" in obj and "text" in obj:
                    return "episodes"
                break
    return "jsonl"
