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
* ``reset``: a fresh history window in the same session (``/new``, ``/reset``,
  idle, daily): it opens a new episode, so two topics never merge;
* ``custom`` (extension state snapshots): its ``customType`` is episode meta;
* ``thinking_level_change``, ``label`` and unknown types: skipped; a message or
  ``custom_message`` with ``display: false`` is hidden from the person and left out;
* an assistant turn that failed (``stopReason: "error"``) is kept, marked failed,
  and counted in the episode's ``meta.failed_turns``.

Only the active branch is read (``openclaw_tree``): entries the user navigated
away from (a ``leaf`` control moved the active leaf) are left out. Thinking
blocks and images are not episode text. Noise: heartbeat polls and their
``HEARTBEAT_OK`` replies, ``NO_REPLY``, session-start prompts; OpenClaw's
metadata envelopes are stripped from user text (the sender becomes a
``person``, the chat's platform the episode's ``channel``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from core.enrich.hints import Hints
from core.models import Episode
from core.ingest.formats.openclaw_tree import TreeScan, on_branch
from core.ingest.formats.lines import collect, iter_objects, line_failed, streaming
from core.ingest.formats.message_text import (
    block_text, blocks, is_noise, result_line, role_line, strip_envelope, to_datetime, tool_args, tool_line
)
from core.ingest.formats.parsed import Parsed, storable
from core.ingest.formats.sessions import Msg, SessionBuilder, SpanCollector

SOURCE = "openclaw"


def agent_from_path(path: Path) -> str:
    """``.../agents/<agent>/sessions/<id>.jsonl`` -> ``<agent>``."""
    parts = path.parts
    for i in range(len(parts) - 3, -1, -1):
        if parts[i] == "agents" and i + 2 < len(parts) and parts[i + 2] == "sessions":
            return storable(parts[i + 1])
    return ""


class _Session:
    """What one session file has said so far: its builder, id and title."""

    def __init__(self, path: Path, parsed: Parsed):
        self.path = path
        self.spool = parsed.spool
        self.session_id = storable(path.stem)
        self.agent = agent_from_path(path) or "openclaw"
        self.builder: SessionBuilder | None = None
        self.title = ""

    def ensure(self) -> SessionBuilder:
        if self.builder is None:
            self.builder = SessionBuilder(self.path, SOURCE, self.session_id, agent=self.agent,
                                          hints=Hints(agents=[]), spool=self.spool)
        return self.builder


@streaming
def stream_openclaw(path: Path, parsed: Parsed) -> Iterator[Episode]:
    # two passes: the active branch is known only at the end of the file
    scan = TreeScan()
    for _, obj in iter_objects(path, Parsed()):
        scan.add(obj)
    keep = scan.active()
    spans = SpanCollector()
    yield from episodes_from_entries(path, parsed, spans, iter_objects(path, parsed), keep=keep)
    parsed.spans = spans.spans()


def episodes_from_entries(path: Path, parsed: Parsed, spans: SpanCollector, entries: Iterator[tuple[int, Any]],
                          keep: set[str] | None = None, agent: str = "", session_id: str = "") -> Iterator[Episode]:
    """The episodes of one session's entries (``(number, entry)`` in order), on the
    active branch ``keep`` (None: all). Shared by the JSONL files and the SQLite
    store, so one event gives one episode whichever copy it was read from."""
    session = _Session(path, parsed)
    if agent:
        session.agent = agent
    if session_id:
        session.session_id = session_id
    for no, obj in entries:
        if not isinstance(obj, dict) or not on_branch(obj, keep):
            continue
        try:
            _entry(session, parsed, no, obj)
        except Exception as exc:  # noqa: BLE001 - one line's failure is that line's error
            line_failed(parsed, path, no, exc)
    if session.builder is not None:
        yield from session.builder.finish(parsed, spans, title=session.title)


parse_openclaw = collect(stream_openclaw)


def _entry(session: _Session, parsed: Parsed, no: int, obj: dict) -> None:
    """Read one entry of the session file."""
    path = session.path
    kind = obj.get("type")
    ts = to_datetime(obj.get("timestamp"))
    if kind == "session":
        if session.builder is None or session.builder.message_count == 0:
            sid = obj.get("id")
            if isinstance(sid, str) and sid.strip():
                session.session_id = sid.strip()
            b = session.ensure()
            b.session_id = session.session_id
            cwd = obj.get("cwd")
            if isinstance(cwd, str) and cwd:
                b.hints.cwd = cwd
                b.meta["cwd"] = cwd
            b.meta["version"] = obj.get("version")
            if obj.get("parentSession"):
                b.meta["parent_session"] = str(obj["parentSession"])
        return
    b = session.ensure()
    if kind == "message":
        msg = obj.get("message")
        if not isinstance(msg, dict):
            parsed.bad(path, no, "message: expected an object")
            return
        ts = to_datetime(msg.get("timestamp")) or ts
        m = _message(msg, no, ts)
        if m is not None:
            model = msg.get("model")
            if isinstance(model, str) and model:
                b.set_part_meta("model", model)
            b.add(m)
            if m.role == "assistant" and msg.get("stopReason") == "error":
                _count_failure(b)
    elif kind == "reset":
        b.cut()  # same session id, a fresh history window: a new episode
        reason = obj.get("reason")
        b.set_part_meta("reset", str(reason) if reason else "reset")
    elif kind == "custom":
        custom_type = obj.get("customType")
        if isinstance(custom_type, str) and custom_type:
            b.set_part_meta("custom", custom_type)
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
            session.title = name.strip()
    elif kind == "custom_message" and obj.get("display"):
        text = block_text(obj.get("content")).strip()
        if text and not is_noise(text):
            b.add(Msg(no, "custom", role_line(str(obj.get("customType") or "custom"), text), ts))
    # thinking_level_change, label and unknown entry types carry no memory


def _count_failure(b: SessionBuilder) -> None:
    """One more failed assistant turn in the episode that holds the message just added."""
    part = b._open  # the part ``add`` just put the message in (SessionBuilder has no getter; sessions.py stays as is)
    if part is not None:
        part.meta["failed_turns"] = int(part.meta.get("failed_turns", 0)) + 1


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
        if msg.get("stopReason") == "error":
            error = msg.get("errorMessage")
            lines.append(role_line("assistant (failed)", error.strip() if isinstance(error, str) and error.strip()
                                   else "the model call failed"))
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
