"""The generic formats, not any one agent's: ``episodes`` (one ``Episode`` object a
line, taken as given, not re-enriched) and ``jsonl`` (one message a line: ``role``,
``content``, ``timestamp``, ``session_id``; sessions may interleave).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from pydantic import ValidationError

from core.enrich.hints import Hints
from core.errors import first_error
from core.ingest.formats.lines import collect, iter_objects, line_failed, streaming
from core.ingest.formats.message_text import block_text, is_noise, role_line, strip_envelope, to_datetime
from core.ingest.formats.parsed import Parsed, storable
from core.ingest.formats.sessions import Msg, SessionBuilder, SessionTable, SpanCollector
from core.models import Episode

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

