"""Hermes Agent ``hermes sessions export`` JSONL: one session a line.

A line is the session row (``id``, ``source`` — the platform: ``cli``,
``telegram``, … —, ``user_id``, ``model``, ``title``, ``started_at``,
``ended_at``, ``parent_session_id``, token counts, …) plus ``messages``: rows
with ``role`` ``user`` | ``assistant`` | ``system`` | ``tool``, ``content``,
``tool_calls`` (OpenAI style ``[{id, type, function: {name, arguments}}]``,
as a list or a JSON string), ``tool_call_id``, ``tool_name`` and
``timestamp`` in epoch seconds.

System prompts and background-review harness prompts are skipped, as are
``reasoning`` fields. A long session splits into several episodes; every
one of them comes from the same source line, so each gets that line as
its span. Export lines can be large: this format allows lines up to
``MAX_LINE_BYTES_HERMES``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from core.enrich.hints import Hints
from core.models import Episode
from core.ingest.formats.lines import MB, collect, iter_objects, line_failed, loads, streaming
from core.ingest.formats.message_text import (
    block_text, is_noise, result_line, role_line, strip_envelope, to_datetime, tool_args, tool_line
)
from core.ingest.formats.parsed import Parsed
from core.ingest.formats.sessions import Msg, SessionBuilder, SpanCollector

SOURCE = "hermes"
MAX_LINE_BYTES_HERMES = 32 * MB
_SESSION_META = ("model", "user_id", "parent_session_id", "end_reason", "started_at", "ended_at")


@streaming
def stream_hermes(path: Path, parsed: Parsed) -> Iterator[Episode]:
    spans = SpanCollector()
    for no, obj in iter_objects(path, parsed, MAX_LINE_BYTES_HERMES):
        try:
            episodes = list(_session(path, parsed, spans, no, obj))
        except Exception as exc:  # noqa: BLE001 - one line (one session) failing is that line's error
            line_failed(parsed, path, no, exc)
            continue
        yield from episodes
    parsed.spans = spans.spans()


parse_hermes = collect(stream_hermes)


def _session(path: Path, parsed: Parsed, spans: SpanCollector, no: int, obj: dict) -> Iterator[Episode]:
    """The episodes of one session line."""
    messages = obj.get("messages")
    if not isinstance(messages, list):
        parsed.bad(path, no, "messages: expected a list (one Hermes session a line)")
        return
    sid = obj.get("id") or obj.get("session_id")
    if not isinstance(sid, (str, int)) or not str(sid).strip():
        parsed.bad(path, no, "id: a session needs an id")
        return
    platform = str(obj.get("source") or "")
    b = SessionBuilder(path, SOURCE, str(sid).strip(), agent="hermes", channel=platform,
                       meta={k: obj[k] for k in _SESSION_META if obj.get(k) not in (None, "")},
                       spool=parsed.spool)
    if platform and platform not in ("cli", "local"):
        b.hints.channels.append(platform)
    title = obj.get("title") if isinstance(obj.get("title"), str) else ""
    session_ts = to_datetime(obj.get("started_at"))
    bad_items = 0
    after_harness = False  # the reply to a dropped review-harness prompt is dropped too
    for m in messages:
        if not isinstance(m, dict):
            bad_items += 1
            continue
        if after_harness and m.get("role") == "assistant" and not m.get("tool_calls"):
            after_harness = False
            continue
        after_harness = _is_harness(m)
        msg = _message(m, no, to_datetime(m.get("timestamp")) or session_ts)
        if msg is not None:
            b.add(msg)
    if bad_items:
        parsed.bad(path, no, f"messages: {bad_items} item(s) not an object; skipped")
    yield from b.finish(parsed, spans, title=(title or "").strip())


_HARNESS_PREFIXES = (
    "Review the conversation above and update the skill library",
    "Review the conversation above and consider saving to memory",
)


def _is_harness(m: dict) -> bool:
    """Hermes' background-review prompt (and so its reply) is not conversation."""
    content = m.get("content")
    return m.get("role") in ("user", "system") and isinstance(content, str) and \
        content.lstrip().startswith(_HARNESS_PREFIXES)


def _calls(value: Any) -> list[dict]:
    if isinstance(value, str):
        try:
            value = loads(value)
        except ValueError:
            return []
    return [c for c in value if isinstance(c, dict)] if isinstance(value, list) else []


def _message(m: dict, no: int, ts: Any) -> Msg | None:
    role = m.get("role")
    content = m.get("content")
    text = block_text(content).strip() if content is not None else ""
    hints = Hints()
    if role == "user":
        text = strip_envelope(text, hints)
        if is_noise(text):
            return None
        hints.requests.append(text)
        return Msg(no, "user", role_line("user", text), ts, hints)
    if role == "assistant":
        lines = []
        text = strip_envelope(text)
        if text and not is_noise(text):
            lines.append(role_line("assistant", text))
        for call in _calls(m.get("tool_calls")):
            fn = call.get("function") if isinstance(call.get("function"), dict) else call
            name = str(fn.get("name") or "tool")
            args = fn.get("arguments", fn.get("input"))
            hints.tool_calls.append((name, tool_args(args)))
            lines.append(tool_line("assistant", name, args))
        return Msg(no, "assistant", "\n".join(lines), ts, hints) if lines else None
    if role == "tool":
        if not text:
            return None
        return Msg(no, "tool", result_line(str(m.get("tool_name") or ""), text), ts)
    return None  # system prompts, and roles this format does not define
