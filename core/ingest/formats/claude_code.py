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

import re
from pathlib import Path
from typing import Any

from ...enrich.extract import Hints
from .common import (
    Msg, Parsed, SessionBuilder, SpanCollector, block_text, blocks, guarded, is_noise, iter_objects, result_line,
    role_line, strip_envelope, to_datetime, tool_args, tool_line,
)

SOURCE = "claude-code"
AGENT = "claude-code"

_TAG_RE = re.compile(r"<([a-z][\w-]*)>(.*?)</\1>", re.S)
_COMMAND_TAGS = ("command-name", "command-message", "command-args", "local-command-stdout",
                 "local-command-stderr", "local-command-caveat", "bash-input", "bash-stdout", "bash-stderr")


def _tags(text: str) -> dict[str, str]:
    return {m.group(1): m.group(2).strip() for m in _TAG_RE.finditer(text)}


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


@guarded
def parse_claude_code(path: Path) -> Parsed:
    parsed = Parsed()
    spans = SpanCollector()
    builders: dict[str, SessionBuilder] = {}
    uuids: dict[str, set[str]] = {}
    titles: list[tuple[int, str, str]] = []  # (line, leafUuid, summary)
    custom_title = ""
    tool_names: dict[str, str] = {}  # tool_use id -> tool name
    in_subagent_dir = path.parent.name == "subagents"
    fallback_session = path.parent.parent.name if in_subagent_dir else path.stem

    def builder_for(obj: dict) -> SessionBuilder:
        sid = obj.get("sessionId") if isinstance(obj.get("sessionId"), str) else fallback_session
        agent_id = obj.get("agentId")
        if (obj.get("isSidechain") or in_subagent_dir) and agent_id:
            key = f"{sid}/agent-{agent_id}"
            agent = f"{AGENT}/agent-{agent_id}"
        elif in_subagent_dir:
            key, agent = f"{sid}/{path.stem}", f"{AGENT}/{path.stem}"
        else:
            key, agent = sid, AGENT
        b = builders.get(key)
        if b is None:
            b = builders[key] = SessionBuilder(path, SOURCE, key, agent=agent, channel="cli")
            if key != sid:
                b.meta["parent_session"] = sid
            uuids[key] = set()
        if not b.hints.cwd and isinstance(obj.get("cwd"), str) and obj["cwd"]:
            b.hints.cwd = obj["cwd"]
            b.meta["cwd"] = obj["cwd"]
            project = Path(obj["cwd"]).name
            if project:
                b.hints.projects.append(project)
        if "git_branch" not in b.meta and obj.get("gitBranch"):
            b.meta["git_branch"] = obj["gitBranch"]
        return b

    for no, obj in iter_objects(path, parsed):
        kind = obj.get("type")
        if kind == "summary":
            if isinstance(obj.get("summary"), str):
                titles.append((no, str(obj.get("leafUuid") or ""), obj["summary"].strip()))
            continue
        if kind == "custom-title":
            if isinstance(obj.get("customTitle"), str) and obj["customTitle"].strip():
                custom_title = obj["customTitle"].strip()
            continue
        if kind == "system":
            if obj.get("subtype") == "compact_boundary":
                builder_for(obj).cut()
            continue
        if kind not in ("user", "assistant"):
            continue  # progress, queue-operation, file-history-snapshot, ...
        b = builder_for(obj)
        if isinstance(obj.get("uuid"), str):
            uuids[b.session_id].add(obj["uuid"])
        if obj.get("isMeta") or obj.get("isApiErrorMessage"):
            continue
        msg = obj.get("message")
        if not isinstance(msg, dict):
            parsed.bad(path, no, "message: expected an object")
            continue
        ts = to_datetime(obj.get("timestamp"))
        if obj.get("isCompactSummary"):
            text = block_text(msg.get("content")).strip()
            if text:
                b.cut()
                b.add(Msg(no, "summary", role_line("compaction summary", text), ts))
            continue
        m = _message(kind, msg, no, ts, tool_names)
        if m is None:
            continue
        model = msg.get("model")
        if isinstance(model, str) and model and not model.startswith("<"):
            b.set_part_meta("model", model)
        b.add(m)

    for key, b in builders.items():
        title = custom_title if key == next(iter(builders)) else ""
        if not title:
            title = next((t for _, leaf, t in reversed(titles) if leaf in uuids[key]), "")
        b.finish(parsed, spans, title=title)
    parsed.spans = spans.spans()
    return parsed


def _message(kind: str, msg: dict, no: int, ts: Any, tool_names: dict[str, str]) -> Msg | None:
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
                    name = tool_names.get(str(block.get("tool_use_id")), "")
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
                    tool_names[block["id"]] = name
                hints.tool_calls.append((name, tool_args(args)))
                lines.append(tool_line("assistant", name, args))
            # thinking / redacted_thinking: the model's scratchpad, not memory
        role = "assistant"
    if not lines:
        return None
    return Msg(no, role, "\n".join(lines), ts, hints)
