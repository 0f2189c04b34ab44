"""Capture a turn an agent hands over (Hermes' ``sync_turn``, OpenClaw's ``agent_end``).

``turn = {"user": str, "assistant": str, "tools": [{"name", "input", "exit", "output"}],
"ts": ISO time, "turn": id}``. Its messages are rendered as the agent's own
store parser renders them (core/ingest/formats/message_text.py: ``user: …``,
``assistant → Bash: command=…``, ``tool Bash (exit 0): …``, ``assistant: …``) and
added to the session's ``SessionBuilder``, carried on from the session's
checkpoint: the episodes are ``<source>:<session>:<part>``, the ids the store's
catch-up ingest gives the same session, which replaces them in place (same id)
rather than adding them again. A turn id seen before is not added twice (an
agent that retries its hook).
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from core.capture.checkpoints import Checkpoint, name_for
from core.capture.write import store_changed
from core.enrich.hints import Hints
from core.errors import BadQuery
from core.ingest.formats import builder_state
from core.ingest.formats.message_text import (
    MAX_TOOL_RESULT_CHARS, clip_block, is_noise, role_line, strip_envelope, tool_args, tool_line, to_datetime
)
from core.ingest.formats.parsed import Parsed, storable
from core.ingest.formats.sessions import Msg, SessionBuilder, SpanCollector
from core.memory.memory import Memory

VERSION = 1
SOURCES = ("openclaw", "claude-code", "hermes")  # an agent with a parser of its own; others: "jsonl"
KEEP_TURNS = 256  # turn ids remembered per session (a retried hook is not added twice)
MAX_SESSION = 200
OUTPUT_LINES = 40  # a tool's output: its first lines (the store keeps it all)


def _text(turn: dict, key: str) -> str:
    value = turn.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise BadQuery(f"turn[{key!r}] must be text, not {type(value).__name__}")
    return storable(value)


def result_text(name: str, exit: Any, output: str) -> str:
    """A tool's result as one message: ``tool NAME (exit N): first lines``."""
    head = "\n".join(output.strip().splitlines()[:OUTPUT_LINES])
    status = f" (exit {exit})" if exit not in (None, "") else ""
    label = f"tool {name}" if name else "tool"
    return f"{label}{status}: {clip_block(head, MAX_TOOL_RESULT_CHARS) or '(no output)'}"


def messages(turn: dict, ts: datetime | None, line: int) -> list[Msg]:
    """The turn's messages in the order they happened: the user, the tool calls, their
    results, the answer. Empty or noise messages are left out, as the parsers do."""
    out: list[Msg] = []
    hints = Hints()
    user = strip_envelope(_text(turn, "user"), hints)
    if user and not is_noise(user):
        hints.requests.append(user)
        out.append(Msg(line, "user", role_line("user", user), ts, hints))
    tools = turn.get("tools") or []
    if not isinstance(tools, list):
        raise BadQuery("turn['tools'] must be a list of {name, input, exit, output}")
    calls, results = Hints(), []
    lines: list[str] = []
    for tool in tools:
        if not isinstance(tool, dict):
            raise BadQuery("each of turn['tools'] must be an object {name, input, exit, output}")
        name = storable(str(tool.get("name") or "tool"))
        args = tool.get("input")
        calls.tool_calls.append((name, tool_args(args)))
        lines.append(tool_line("assistant", name, args))
        output = tool.get("output")
        output = output if isinstance(output, str) else "" if output is None else json.dumps(output, default=str)
        results.append(result_text(name, tool.get("exit"), storable(output)))
    if lines:
        out.append(Msg(line, "assistant", "\n".join(lines), ts, calls))
        out.extend(Msg(line, "tool", r, ts) for r in results)
    answer = strip_envelope(_text(turn, "assistant"))
    if answer and not is_noise(answer):
        out.append(Msg(line, "assistant", role_line("assistant", answer), ts))
    return out


def turn_id(turn: dict) -> str:
    given = turn.get("turn")
    if isinstance(given, (str, int)) and str(given):
        return str(given)[:200]
    raw = json.dumps(turn, sort_keys=True, ensure_ascii=False, default=str)
    return "h:" + hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def capture_turn(memory: Memory, agent: str, session: str, turn: dict, *, wait: float = 5.0) -> list[str]:
    """Store ``turn`` of ``agent``'s ``session``; the ids of the episodes it went into.
    ``BadQuery`` (one line) for a turn that is not what the contract says."""
    if not isinstance(agent, str) or not agent.strip():
        raise BadQuery("capture_turn needs the agent's name, e.g. hermes or openclaw")
    if not isinstance(session, str) or not session.strip() or len(session) > MAX_SESSION:
        raise BadQuery(f"capture_turn needs the session id (text, at most {MAX_SESSION} characters)")
    if not isinstance(turn, dict):
        raise BadQuery("a turn is an object {user, assistant, tools, ts, turn}")
    agent, session = storable(agent.strip()), storable(session.strip())
    source = agent if agent in SOURCES else "jsonl"
    ts = to_datetime(turn.get("ts")) or datetime.now(timezone.utc)
    tid = turn_id(turn)
    cp = Checkpoint(memory.state_dir, name_for("turns", f"{source}\0{session}"))
    with cp.held(wait):
        state = cp.load() or {}
        if state.get("v") != VERSION or not isinstance(state.get("builder"), dict):
            state = {}
        seen = [str(t) for t in state.get("turns") or []]
        path = Path(f"{agent}:{session}")  # what the episodes' meta names as where they came from
        if state:
            b = builder_state.load(state["builder"], path)
        else:
            b = SessionBuilder(path, source, session, agent=agent, channel=storable(str(turn.get("channel") or "")))
        if tid in seen:
            return [f"{source}:{session}:{b._open.index}"] if b._open is not None else []
        line = int(state.get("line") or 0) + 1
        first: int | None = None  # the part the turn's first message went into
        for msg in messages(turn, ts, line):
            b.add(msg)
            if first is None and b._open is not None:
                first = b._open.index
        episodes = list(b.finish(Parsed(), SpanCollector()))
        store_changed(memory, episodes, wait)
        cp.save({"v": VERSION, "line": line, "turns": (seen + [tid])[-KEEP_TURNS:],
                 "builder": builder_state.dump(b)})
    return [ep.id for ep in episodes if first is not None and _part(ep.id) >= first]


def _part(episode_id: str) -> int:
    tail = episode_id.rsplit(":", 1)[-1]
    return int(tail) if tail.isdigit() else 0
