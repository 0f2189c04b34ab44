"""What an agent did before it asked: the last turns of its transcript (Claude
Code's ``transcript_path`` JSONL, or Hermes' session in its ``state.db``, named
in the request's meta by the hook), or a loop's last steps, one line each, for
a person deciding the request.

The path comes from the agent (its hook input), so it is read carefully: only
a regular ``.jsonl`` file (a FIFO or device would block or never end), only its
last ``MAX_BYTES``, lines redacted like everything ARS shows, and anything it
cannot read becomes one line saying why, never an exception."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.loop.models import LoopState

MAX_BYTES = 256 * 1024  # read at most this much of the transcript's end
LINE_CHARS = 300  # each turn is cut to this many characters
TURNS = 6


def _one_line(text: str, limit: int = LINE_CHARS) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _content_text(content: Any) -> str:
    """A message's content as text: its text parts, tool calls as ``tool <name> <input>``,
    tool results as ``result: ...``."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for part in content:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text":
            parts.append(str(part.get("text", "")))
        elif kind == "tool_use":
            args = part.get("input")
            shown = args.get("command") if isinstance(args, dict) and "command" in args else \
                json.dumps(args, ensure_ascii=False)[:LINE_CHARS]
            parts.append(f"tool {part.get('name', '?')}: {shown}")
        elif kind == "tool_result":
            parts.append("result: " + _content_text(part.get("content")))
    return " ".join(p for p in parts if p)


def _turn(record: Any) -> str | None:
    """One transcript line as ``role: text``, or None for what is not a turn (summaries, meta)."""
    if not isinstance(record, dict) or record.get("type") not in ("user", "assistant"):
        return None
    msg = record.get("message")
    if not isinstance(msg, dict):
        return None
    text = _content_text(msg.get("content"))
    if not text.strip():
        return None
    return f"{msg.get('role') or record['type']}: {text}"


def read_tail(path: Path, max_bytes: int = MAX_BYTES) -> bytes:
    """The last ``max_bytes`` of a regular file, opened without blocking (``OSError`` /
    ``ValueError`` with the reason otherwise)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("not a regular file")
        start = max(0, info.st_size - max_bytes)
        os.lseek(fd, start, os.SEEK_SET)
        chunks, left = [], info.st_size - start
        while left > 0:
            chunk = os.read(fd, min(left, 65536))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if start > 0:  # the first line is cut: drop it
            data = data.split(b"\n", 1)[1] if b"\n" in data else b""
        return data
    finally:
        os.close(fd)


def transcript_tail(path: str | os.PathLike, turns: int = TURNS, max_bytes: int = MAX_BYTES) -> list[str]:
    """The last ``turns`` turns of a Claude Code transcript, one redacted line each; a file
    that cannot be read is one line saying which and why."""
    from core.govern.redact import redact_text

    p = Path(path)
    if p.suffix != ".jsonl":
        return [f"transcript {p} not read: only a .jsonl transcript is read"]
    try:
        data = read_tail(p, max_bytes)
    except FileNotFoundError:
        return [f"transcript {p} not found (the session may have been cleaned up)"]
    except (OSError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return [f"transcript {p} cannot be read ({why})"]
    out: list[str] = []
    for raw in data.splitlines():
        if not raw.strip():
            continue
        try:
            turn = _turn(json.loads(raw))
        except (ValueError, RecursionError):
            continue  # a line being written, or damage: the others still count
        if turn is not None:
            out.append(_one_line(redact_text(turn)))
    return out[-turns:] if turns > 0 else []


def loop_steps(state: "LoopState", steps: int = TURNS) -> list[str]:
    """A loop's last iterations, one line each: what it ran, how it went, who decided."""
    out: list[str] = []
    for rec in state.iterations[-steps:]:
        a = rec.action
        what = (a.description or f"{a.tool} {json.dumps(a.args, ensure_ascii=False)}") if a else "no action"
        line = f"#{rec.iteration} {what}"
        if rec.result is not None:
            line += " → ran" if rec.result.ok else f" → failed: {rec.result.error or rec.result.output}"
        if rec.verification is not None:
            v = rec.verification
            line += f", verified {v.outcome}" + (f": {v.reason}" if v.reason else "")
        if rec.decision:
            line += f" [{rec.decision}]"
        out.append(_one_line(line))
    if state.last_observation:
        out.append(_one_line(f"observed: {state.last_observation}"))
    return out


def request_context(meta: dict[str, Any], turns: int = TURNS) -> list[str]:
    """The last turns of the transcript a request names: Claude Code's ``transcript_path``,
    or Hermes' session in its ``state.db`` (``hermes_db`` and ``session_id``); else []."""
    if not isinstance(meta, dict):
        return []
    path = meta.get("transcript_path")
    if isinstance(path, str) and path:
        return transcript_tail(path, turns)
    session = meta.get("session_id")
    if not isinstance(session, str) or not session:
        return []
    for key, tail in (("hermes_db", hermes_tail), ("openclaw_db", openclaw_tail)):
        db = meta.get(key)
        if isinstance(db, str) and db:
            return tail(db, session, turns)
    return []


def _store_problem(p: Path, name: str, what: str) -> str | None:
    """Why the agent store ``p`` named by a request is not read, or None: only a regular file
    of its own name (the path comes from the agent's hook input)."""
    try:
        ok = p.name == name and stat.S_ISREG(os.lstat(p).st_mode)
    except OSError as exc:
        return f"{what} {p} cannot be read ({exc.strerror or exc})"
    return None if ok else f"{what} {p} not read: only a regular {name} is read"


def openclaw_tail(db: str | os.PathLike, session: str, turns: int = TURNS) -> list[str]:
    """The last ``turns`` lines of an OpenClaw session, from its agent database read-only
    (core/ingest/stores/openclaw_db.py), as ingest words them; redacted."""
    from core.govern.redact import redact_text
    from core.ingest.formats.openclaw import _message
    from core.ingest.stores.openclaw_db import session_events

    p = Path(db)
    problem = _store_problem(p, "openclaw-agent.sqlite", "OpenClaw store")
    if problem:
        return [problem]
    try:
        events = session_events(p, session)
    except Exception as exc:  # noqa: BLE001 - a damaged or busy store is one line, never an error
        return [f"OpenClaw store {p} cannot be read ({_one_line(exc, 120)})"]
    out: list[str] = []
    for e in events:
        if isinstance(e, dict) and e.get("type") == "message" and isinstance(e.get("message"), dict):
            m = _message(e["message"], 0, None)
            if m is not None:
                out.extend(_one_line(redact_text(line)) for line in m.text.splitlines() if line.strip())
    if not out:
        return [f"no messages of session {session} in {p}"]
    return out[-turns:] if turns > 0 else []


def hermes_tail(db: str | os.PathLike, session: str, turns: int = TURNS) -> list[str]:
    """The last ``turns`` messages of a Hermes session, one redacted line each, read from its
    ``state.db`` read-only as ingest reads it (core/ingest/stores/hermes_db.py); only a
    regular file named ``state.db``; what cannot be read is one line saying why."""
    from core.govern.redact import redact_text
    from core.ingest.stores.hermes_db import decode_content, read_sessions

    p = Path(db)
    problem = _store_problem(p, "state.db", "Hermes store")
    if problem:
        return [problem]
    try:
        found = read_sessions(p, [session])
    except Exception as exc:  # noqa: BLE001 - a damaged or busy store is one line, never an error
        return [f"Hermes store {p} cannot be read ({_one_line(exc, 120)})"]
    if not found:
        return [f"no session {session} in {p}"]
    out: list[str] = []
    for m in found[0][1]:
        role = m.get("role")
        if role not in ("user", "assistant", "tool"):
            continue  # the system prompt is not what the agent did
        text = _content_text(decode_content(m.get("content"))) if m.get("content") is not None else ""
        calls = m.get("tool_calls")
        try:
            calls = json.loads(calls) if isinstance(calls, str) else calls
        except ValueError:
            calls = None
        for c in calls if isinstance(calls, list) else []:
            fn = c.get("function") if isinstance(c, dict) else None
            if isinstance(fn, dict):
                text += f" tool {fn.get('name', '?')}: {str(fn.get('arguments', ''))[:LINE_CHARS]}"
        if text.strip():
            label = f"result of {m.get('tool_name')}" if role == "tool" and m.get("tool_name") else role
            out.append(_one_line(redact_text(f"{label}: {text.strip()}")))
    return out[-turns:] if turns > 0 else []
