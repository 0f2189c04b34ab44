"""Claude Code session JSONL.

``~/.claude/projects/<dir>/<session>.jsonl``, subagents in
``<session>/subagents/agent-<id>.jsonl``. A line has ``type``:

* ``user`` / ``assistant``: ``message.content`` a string or blocks ``text``,
  ``thinking``, ``tool_use{id, name, input}``, ``tool_result{tool_use_id,
  content, is_error}``, ``image``. One assistant API message is often spread
  over several lines (one block each, same ``message.id``);
* ``summary{summary, leafUuid}``: a session title; used when its
  ``leafUuid`` is a message of this file (resumed sessions also carry titles
  of *other* sessions, which are ignored);
* ``custom-title{customTitle}``: a title the user set;
* ``system`` with ``subtype: compact_boundary``: a compaction (new episode);
  other ``system`` lines (``api_error``, ``turn_duration``, …),
  ``progress``, ``queue-operation``, ``file-history-snapshot``: skipped.

Session ids: the main transcript is ``<sessionId>``; a subagent's (its lines
carry ``isSidechain: true`` and ``agentId``, and the *parent's* ``sessionId``)
is ``<sessionId>/agent-<agentId>``, so parent and subagents never collide.

Noise: ``isMeta`` lines (local-command caveats, expanded skill prompts),
``[Request interrupted by user]``, empty command output, API error
placeholders, ``<system-reminder>`` blocks. Slash commands become
``/name args``; ``<task-notification>`` keeps the subagent's summary and
result; ``toolUseResult`` (a structured copy of the tool result) is not read.
"""

from __future__ import annotations

import bisect
import re
from array import array
from collections import OrderedDict
from pathlib import Path
from typing import Any, Iterable, Iterator

from core.enrich.hints import Hints
from core.models import Episode
from core.ingest.formats.lines import collect, iter_objects, line_failed, streaming
from core.ingest.formats.message_text import (
    block_text, blocks, is_noise, result_line, role_line, strip_envelope, to_datetime, tool_args, tool_line
)
from core.ingest.formats import builder_state
from core.ingest.formats.parsed import Parsed, storable
from core.ingest.formats.sessions import Msg, SessionBuilder, SpanCollector

SOURCE = "claude-code"
AGENT = "claude-code"

# Tags are found as an opening tag, then the first closing tag of that name
# after it (looked up among every closing tag, found once): a lazy
# ``<(tag)>(.*?)</\1>`` would rescan the rest of the text for every tag that
# is never closed.
_OPEN_TAG_RE = re.compile(r"<([a-z][\w-]*)>")
_CLOSE_TAG_RE = re.compile(r"</([a-z][\w-]*)>")
_COMMAND_TAGS = ("command-name", "command-message", "command-args", "local-command-stdout",
                 "local-command-stderr", "local-command-caveat", "bash-input", "bash-stdout", "bash-stderr")
# tool_use ids remembered for naming their results (a result follows its call closely)
_TOOL_NAMES_KEPT = 4096


def _tags(text: str) -> dict[str, str]:
    closers: dict[str, list[int]] = {}
    for m in _CLOSE_TAG_RE.finditer(text):
        closers.setdefault(m.group(1), []).append(m.start())
    out: dict[str, str] = {}
    pos = 0
    while (m := _OPEN_TAG_RE.search(text, pos)) is not None:
        name, body = m.group(1), m.end()
        at = closers.get(name, [])
        i = bisect.bisect_left(at, body)
        if i == len(at):
            pos = body  # never closed: not a tag
            continue
        out[name] = text[body:at[i]].strip()
        pos = at[i] + len(name) + 3
    return out


def user_text(raw: str, hints: Hints) -> tuple[str, str]:
    """(role label, text) of a user string after Claude Code's wrappers."""
    s = raw.strip()
    if s.startswith("<") and any(f"<{t}>" in s for t in _COMMAND_TAGS):
        tags = _tags(s)
        if "local-command-caveat" in tags:
            return "user", ""
        if "bash-input" in tags:
            hints.commands.append(tags["bash-input"])
            return "user", f"ran: {tags['bash-input']}"
        if "command-name" in tags:
            cmd = tags["command-name"]
            args = tags.get("command-args", "")
            return "user", f"{cmd} {args}".strip()
        out = "\n".join(v for k, v in tags.items() if k in ("local-command-stdout", "local-command-stderr",
                                                             "bash-stdout", "bash-stderr") and v)
        if not out or out.strip() in ("(no content)", ""):
            return "user", ""
        return "command output", out
    if s.startswith("<task-notification>"):
        tags = _tags(_tags(s).get("task-notification", s))
        body = "\n".join(v for v in (tags.get("summary", ""), tags.get("result", "")) if v)
        return "task notification", body or strip_envelope(s)
    return "user", strip_envelope(s)


class _Transcript:
    """What one transcript file has said so far: a builder per session (the
    main one and each subagent's), the message uuids of each (to pick its
    title) and the tool names by tool_use id."""

    def __init__(self, path: Path, parsed: Parsed):
        self.path = path
        self.spool = parsed.spool
        self.builders: dict[str, SessionBuilder] = {}
        # uuids as 64-bit hashes in an array: eight bytes a message, not a str in a set
        self.uuids: dict[str, array] = {}
        self.last_uuid: dict[str, str] = {}  # each session's latest message uuid (a title's leaf, carried on)
        self.titles: list[tuple[int, str, str]] = []  # (line, leafUuid, summary)
        self.custom_title = ""
        self.tool_names: OrderedDict[str, str] = OrderedDict()  # tool_use id -> tool name (the latest few)
        self.kept_titles: dict[str, str] = {}  # session key -> the title it had at the last read
        self.in_subagent_dir = path.parent.name == "subagents"
        self.fallback_session = storable(path.parent.parent.name if self.in_subagent_dir else path.stem)

    def builder_for(self, obj: dict) -> SessionBuilder:
        path = self.path
        sid = obj.get("sessionId") if isinstance(obj.get("sessionId"), str) else self.fallback_session
        agent_id = obj.get("agentId")
        stem = storable(path.stem)
        if (obj.get("isSidechain") or self.in_subagent_dir) and agent_id:
            key = f"{sid}/agent-{agent_id}"
            agent = f"{AGENT}/agent-{agent_id}"
        elif self.in_subagent_dir:
            key, agent = f"{sid}/{stem}", f"{AGENT}/{stem}"
        else:
            key, agent = sid, AGENT
        b = self.builders.get(key)
        if b is None:
            b = self.builders[key] = SessionBuilder(path, SOURCE, key, agent=agent, channel="cli", spool=self.spool)
            if key != sid:
                b.meta["parent_session"] = sid
            self.uuids[key] = array("q")
        if not b.hints.cwd and isinstance(obj.get("cwd"), str) and obj["cwd"]:
            b.hints.cwd = obj["cwd"]
            b.meta["cwd"] = obj["cwd"]
            project = Path(obj["cwd"]).name
            if project:
                b.hints.projects.append(project)
        if "git_branch" not in b.meta and obj.get("gitBranch"):
            b.meta["git_branch"] = obj["gitBranch"]
        return b

    def remember_tool(self, tool_id: str, name: str) -> None:
        self.tool_names[tool_id] = name
        if len(self.tool_names) > _TOOL_NAMES_KEPT:
            self.tool_names.popitem(last=False)

    def title_of(self, key: str) -> str:
        """The session's title: the custom title (main session), else the last
        summary whose leafUuid is one of its messages."""
        if self.custom_title and key == next(iter(self.builders)):
            return self.custom_title
        leaves = {hash(leaf) for _, leaf, _ in self.titles}
        mine = leaves.intersection(self.uuids[key])
        return next((t for _, leaf, t in reversed(self.titles) if hash(leaf) in mine), "")


@streaming
def stream_claude_code(path: Path, parsed: Parsed) -> Iterator[Episode]:
    spans = SpanCollector()
    t = _Transcript(path, parsed)
    read_lines(t, parsed, iter_objects(path, parsed))
    yield from finish(t, parsed, spans)
    parsed.spans = spans.spans()


def read_lines(t: _Transcript, parsed: Parsed, objects: Iterable[tuple[int, dict]]) -> None:
    """Read transcript lines ``(line number, object)`` into ``t``."""
    for no, obj in objects:
        try:
            _line(t, parsed, no, obj)
        except Exception as exc:  # noqa: BLE001 - one line's failure is that line's error
            line_failed(parsed, t.path, no, exc)


def finish(t: _Transcript, parsed: Parsed, spans: SpanCollector) -> Iterator[Episode]:
    """Every session's episodes (of a resumed ``t``: its open parts and those closed since)."""
    for key, b in t.builders.items():
        title = t.title_of(key) or t.kept_titles.get(key, "")
        t.kept_titles[key] = title
        yield from b.finish(parsed, spans, title=title)


# -- carried on a turn at a time (core/capture): the transcript's state between two reads ----------
KEEP_TOOL_NAMES = 64  # tool_use ids kept for naming results read in a later turn


def transcript(path: Path, parsed: Parsed, state: dict | None = None) -> _Transcript:
    """A transcript reader, fresh or carrying on from ``checkpoint``'s state."""
    t = _Transcript(path, parsed)
    if state:
        t.custom_title = str(state.get("custom_title") or "")
        t.kept_titles = {str(k): str(v) for k, v in (state.get("titles") or {}).items()}
        for tool_id, name in (state.get("tool_names") or {}).items():
            t.remember_tool(str(tool_id), str(name))
        for key, b in (state.get("builders") or {}).items():
            t.builders[key] = builder_state.load(b, path, parsed.spool)
            t.uuids[key] = array("q")
            leaf = (state.get("last_uuid") or {}).get(key)
            if isinstance(leaf, str):
                t.uuids[key].append(hash(leaf))
                t.last_uuid[key] = leaf
    return t


def checkpoint(t: _Transcript) -> dict:
    """What ``transcript`` needs to carry on after ``finish``."""
    names = list(t.tool_names.items())[-KEEP_TOOL_NAMES:]
    return {"custom_title": t.custom_title, "titles": t.kept_titles, "tool_names": dict(names),
            "last_uuid": t.last_uuid,
            "builders": {k: builder_state.dump(b) for k, b in t.builders.items()}}


parse_claude_code = collect(stream_claude_code)


def _line(t: _Transcript, parsed: Parsed, no: int, obj: dict) -> None:
    """Read one line of the transcript."""
    kind = obj.get("type")
    if kind == "summary":
        if isinstance(obj.get("summary"), str):
            t.titles.append((no, str(obj.get("leafUuid") or ""), obj["summary"].strip()))
        return
    if kind == "custom-title":
        if isinstance(obj.get("customTitle"), str) and obj["customTitle"].strip():
            t.custom_title = obj["customTitle"].strip()
        return
    if kind == "system":
        if obj.get("subtype") == "compact_boundary":
            t.builder_for(obj).cut()
        return
    if kind not in ("user", "assistant"):
        return  # progress, queue-operation, file-history-snapshot, ...
    b = t.builder_for(obj)
    if isinstance(obj.get("uuid"), str):
        t.uuids[b.session_id].append(hash(obj["uuid"]))
        t.last_uuid[b.session_id] = obj["uuid"]
    if obj.get("isMeta") or obj.get("isApiErrorMessage"):
        return
    msg = obj.get("message")
    if not isinstance(msg, dict):
        parsed.bad(t.path, no, "message: expected an object")
        return
    ts = to_datetime(obj.get("timestamp"))
    if obj.get("isCompactSummary"):
        text = block_text(msg.get("content")).strip()
        if text:
            b.cut()
            b.add(Msg(no, "summary", role_line("compaction summary", text), ts))
        return
    m = _message(kind, msg, no, ts, t)
    if m is None:
        return
    model = msg.get("model")
    if isinstance(model, str) and model and not model.startswith("<"):
        b.set_part_meta("model", model)
    b.add(m)


def _message(kind: str, msg: dict, no: int, ts: Any, t: _Transcript) -> Msg | None:
    content = msg.get("content")
    hints = Hints()
    lines: list[str] = []
    if kind == "user":
        for block in blocks(content):
            btype = block.get("type")
            if btype == "text" and isinstance(block.get("text"), str):
                label, text = user_text(block["text"], hints)
                if text and not is_noise(text):
                    if label == "user":
                        hints.requests.append(text)
                    lines.append(role_line(label, text))
            elif btype == "tool_result":
                text = block_text(block.get("content")).strip()
                if text:
                    name = t.tool_names.get(str(block.get("tool_use_id")), "")
                    lines.append(result_line(name, text, bool(block.get("is_error"))))
            # images and documents are not remembered text
        role = "user"
    else:
        for block in blocks(content):
            btype = block.get("type")
            if btype == "text" and isinstance(block.get("text"), str):
                text = strip_envelope(block["text"])
                if not is_noise(text):
                    lines.append(role_line("assistant", text))
            elif btype in ("tool_use", "server_tool_use"):
                name = str(block.get("name") or "tool")
                args = block.get("input")
                if isinstance(block.get("id"), str):
                    t.remember_tool(block["id"], name)
                hints.tool_calls.append((name, tool_args(args)))
                lines.append(tool_line("assistant", name, args))
            # thinking / redacted_thinking: the model's scratchpad, not memory
        role = "assistant"
    if not lines:
        return None
    return Msg(no, role, "\n".join(lines), ts, hints)
