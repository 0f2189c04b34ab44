"""OpenClaw session JSONL (pi session format v3).

``~/.openclaw/agents/<agent>/sessions/<id>.jsonl``: a ``session`` header
(``version``, ``id``, ``cwd``, ``timestamp``) and entries linked by
``id``/``parentId``:

* ``message``: ``message.role`` ``user`` | ``assistant`` | ``toolResult`` |
  ``bashExecution`` | ``custom`` | ``branchSummary`` | ``compactionSummary``;
  ``content`` a string or blocks ``text``, ``thinking``, ``toolCall{id, name,
  arguments}``, ``image``;
* ``compaction{summary}`` and ``branch_summary{summary}``: the summary opens a
  new episode (what came before was compacted away);
* ``model_change{provider, modelId}``: recorded in the episode's meta;
* ``session_info{name}``: the session title;
* ``thinking_level_change``, ``custom``, ``label`` and unknown types: skipped.

Entries are taken in file order (branches are not re-linked). Thinking
blocks and images are not episode text. Noise: heartbeat polls and their
``HEARTBEAT_OK`` replies, ``NO_REPLY``, session-start prompts; OpenClaw's
metadata envelopes are stripped from user text (the sender becomes a
``person``, the chat's platform the episode's ``channel``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...enrich.extract import Hints
from .common import (
    Msg, Parsed, SessionBuilder, SpanCollector, block_text, blocks, guarded, is_noise, iter_objects, result_line,
    role_line, strip_envelope, to_datetime, tool_args, tool_line,
)

SOURCE = "openclaw"


def agent_from_path(path: Path) -> str:
    """``.../agents/<agent>/sessions/<id>.jsonl`` -> ``<agent>``."""
    parts = path.parts
    for i in range(len(parts) - 3, -1, -1):
        if parts[i] == "agents" and i + 2 < len(parts) and parts[i + 2] == "sessions":
            return parts[i + 1]
    return ""


@guarded
def parse_openclaw(path: Path) -> Parsed:
    parsed = Parsed()
    spans = SpanCollector()
    session_id = path.stem
    agent = agent_from_path(path) or "openclaw"
    builder: SessionBuilder | None = None
    title = ""

    def ensure() -> SessionBuilder:
        nonlocal builder
        if builder is None:
            builder = SessionBuilder(path, SOURCE, session_id, agent=agent, hints=Hints(agents=[]))
        return builder

    for no, obj in iter_objects(path, parsed):
        kind = obj.get("type")
        ts = to_datetime(obj.get("timestamp"))
        if kind == "session":
            if builder is None or builder.message_count == 0:
                sid = obj.get("id")
                if isinstance(sid, str) and sid.strip():
                    session_id = sid.strip()
                b = ensure()
                b.session_id = session_id
                cwd = obj.get("cwd")
                if isinstance(cwd, str) and cwd:
                    b.hints.cwd = cwd
                    b.meta["cwd"] = cwd
                b.meta["version"] = obj.get("version")
                if obj.get("parentSession"):
                    b.meta["parent_session"] = str(obj["parentSession"])
            continue
        b = ensure()
        if kind == "message":
            msg = obj.get("message")
            if not isinstance(msg, dict):
                parsed.bad(path, no, "message: expected an object")
                continue
            ts = to_datetime(msg.get("timestamp")) or ts
            m = _message(msg, no, ts)
            if m is not None:
                model = msg.get("model")
                if isinstance(model, str) and model:
                    b.set_part_meta("model", model)
                b.add(m)
        elif kind in ("compaction", "branch_summary"):
            summary = obj.get("summary")
            if isinstance(summary, str) and summary.strip():
                b.cut()
                label = "compaction summary" if kind == "compaction" else "branch summary"
                b.add(Msg(no, "summary", role_line(label, summary.strip()), ts))
        elif kind == "model_change":
            model = obj.get("modelId") or obj.get("model")
            if model:
                provider = obj.get("provider")
                b.set_part_meta("model", f"{provider}/{model}" if provider else str(model))
        elif kind == "session_info":
            name = obj.get("name")
            if isinstance(name, str) and name.strip():
                title = name.strip()
        elif kind == "custom_message" and obj.get("display"):
            text = block_text(obj.get("content")).strip()
            if text and not is_noise(text):
                b.add(Msg(no, "custom", role_line(str(obj.get("customType") or "custom"), text), ts))
        # thinking_level_change, custom, label and unknown entry types carry no memory
    if builder is not None:
        builder.finish(parsed, spans, title=title)
    parsed.spans = spans.spans()
    return parsed


def _message(msg: dict, no: int, ts: Any) -> Msg | None:
    """The episode message of one ``message`` entry; None for noise."""
    role = msg.get("role")
    content = msg.get("content")
    hints = Hints()
    if role == "user":
        raw = block_text(content)
        text = strip_envelope(raw, hints)
        if is_noise(text):
            return None
        hints.requests.append(text)
        return Msg(no, "user", role_line("user", text), ts, hints)
    if role == "assistant":
        lines: list[str] = []
        for block in blocks(content):
            btype = block.get("type")
            if btype == "text" and isinstance(block.get("text"), str):
                t = strip_envelope(block["text"])
                if not is_noise(t):
                    lines.append(role_line("assistant", t))
            elif btype in ("toolCall", "tool_use", "tool_call"):
                name = str(block.get("name") or "tool")
                args = block.get("arguments", block.get("input"))
                hints.tool_calls.append((name, tool_args(args)))
                lines.append(tool_line("assistant", name, args))
            # thinking and image blocks are not remembered text
        if not lines:
            return None
        return Msg(no, "assistant", "\n".join(lines), ts, hints)
    if role == "toolResult":
        name = str(msg.get("toolName") or "")
        text = block_text(content).strip()
        if not text:
            return None
        return Msg(no, "tool", result_line(name, text, bool(msg.get("isError"))), ts)
    if role == "bashExecution":
        command = msg.get("command")
        if not isinstance(command, str) or not command.strip():
            return None
        hints.commands.append(command)
        output = msg.get("output") if isinstance(msg.get("output"), str) else ""
        text = f"user ran: {command.strip()}"
        if output and output.strip():
            text += "\n" + result_line("bash", output)
        return Msg(no, "user", text, ts, hints)
    if role in ("compactionSummary", "branchSummary"):
        summary = msg.get("summary")
        if isinstance(summary, str) and summary.strip():
            return Msg(no, "summary", role_line("summary", summary.strip()), ts)
        return None
    if role == "custom":
        text = block_text(content).strip()
        if text and not is_noise(text) and msg.get("display", True):
            return Msg(no, "custom", role_line(str(msg.get("customType") or "custom"), text), ts)
        return None
    return None
