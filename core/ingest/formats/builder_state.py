"""A ``SessionBuilder`` written down between two turns, and carried on from there.

Capture (core/capture) adds a session's messages a turn at a time, each turn
in a fresh process: what the builder needs to go on splitting exactly as one
reading of the whole session would is its open part (messages, size, times,
meta), its part counter, the ``prev`` id the open part chains to, and the
session-wide facts (meta, hints, channel). Closed parts are stored already and
are not kept. The state is plain JSON (no pickle: it lives in the state
directory, which an agent can write).

Whoever writes the state down redacts its secrets (core/capture/checkpoints.py):
the open part's ``size`` is a number and stays the size of the text as read, so
a part splits where the whole-session reading splits it, and an episode rebuilt
from redacted messages is the episode the ingest stores (it redacts the same way).
"""

from __future__ import annotations

from dataclasses import asdict, fields
from datetime import datetime
from pathlib import Path
from typing import Any

from core.enrich.hints import Hints
from core.ingest.formats.sessions import Msg, SessionBuilder, _Part

VERSION = 1


def _ts(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _dt(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def _hints_state(h: Hints) -> dict:
    d = asdict(h)
    d["tool_calls"] = [list(c) for c in d["tool_calls"]]  # JSON has no tuples (nor does the redaction walk them)
    return d


def _hints(d: Any) -> Hints:
    if not isinstance(d, dict):
        return Hints()
    known = {f.name for f in fields(Hints)}
    h = Hints(**{k: v for k, v in d.items() if k in known})
    h.tool_calls = [(str(c[0]), c[1] if isinstance(c[1], dict) else {}) for c in h.tool_calls
                    if isinstance(c, (list, tuple)) and len(c) == 2]
    return h


def _msg_state(m: Msg) -> dict:
    return {"line": m.line, "role": m.role, "text": m.text, "ts": _ts(m.ts),
            "hints": _hints_state(m.hints), "lines": list(m.lines)}


def _msg(d: dict) -> Msg:
    return Msg(int(d.get("line") or 0), str(d.get("role") or ""), str(d.get("text") or ""), _dt(d.get("ts")),
               _hints(d.get("hints")), tuple(int(x) for x in d.get("lines") or ()))


def dump(b: SessionBuilder) -> dict:
    """The builder after ``finish``: what the next turn carries on from."""
    part = b._open
    return {
        "v": VERSION, "source": b.source, "session_id": b.session_id, "agent": b.agent, "channel": b.channel,
        "meta": b.meta, "hints": _hints_state(b.hints), "parts": b._parts, "messages": b._messages,
        "first_channel": b._first_channel, "cut": b._cut, "pending_meta": b._pending_meta,
        "prev": b.open_prev if part is not None else b.prev,
        "open": None if part is None else {
            "index": part.index, "size": part.size, "first": _ts(part.first), "last": _ts(part.last),
            "meta": part.meta, "msgs": [_msg_state(m) for m in part.msgs]},
    }


def load(d: dict, path: Path, spool=None) -> SessionBuilder:
    """A builder that goes on where ``dump`` left it (its open part restored, nothing closed)."""
    b = SessionBuilder(path, str(d["source"]), str(d["session_id"]), agent=str(d.get("agent") or ""),
                       channel=str(d.get("channel") or ""), meta=dict(d.get("meta") or {}),
                       hints=_hints(d.get("hints")), spool=spool)
    b._parts = int(d.get("parts") or 0)
    b._messages = int(d.get("messages") or 0)
    b._first_channel = str(d.get("first_channel") or "")
    b._cut = bool(d.get("cut"))
    b._pending_meta = dict(d.get("pending_meta") or {})
    b.prev = d.get("prev") if isinstance(d.get("prev"), str) else None
    o = d.get("open")
    if isinstance(o, dict):
        b._open = _Part(int(o.get("index") or 0), [_msg(m) for m in o.get("msgs") or [] if isinstance(m, dict)],
                        int(o.get("size") or 0), _dt(o.get("first")), _dt(o.get("last")), dict(o.get("meta") or {}))
    return b
