"""The tools a loop can act with. Each declares its risk: a ``risky`` tool
never runs without a person's approval (the loop goes to ``waiting_human``).

Built-ins:

* ``recall`` (safe): search memory;
* ``note`` (safe): write a memory (an ``Episode`` with source ``loop``);
* ``wait`` (safe): pause before checking again (capped);
* ``shell`` (risky): run a shell command, with a timeout, output captured;
* ``scripted`` (safe, offline policy only): an action a goal file describes
  but no tool performs; its outcome is the script's;
* ``finish`` (safe, policy only): claim the goal is done; verify decides.

A tool never raises into the engine: a failure is a ``ToolResult`` with
``ok=False`` and a one-line error.

A tool names the arguments a shell parses (``shell_args``: ``cmd`` for
``shell``). A person's answer put into one of them (``{answer}`` in a goal
file's script) is quoted for where it stands (``fill_shell``), so it is
always one literal word and never shell syntax; the proposed action holds
the command exactly as it will run, which is what a person approves.
"""

from __future__ import annotations

import hashlib
import shlex
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from core.models import Episode
from core.loop.models import Risk, ToolResult

OUTPUT_LIMIT = 4000


@dataclass
class ToolContext:
    state_dir: Path
    memory: Any  # core.memory.memory.Memory (duck-typed: recall, store)
    loop_id: str = ""
    goal_id: str = ""
    iteration: int = 0


@dataclass
class Tool:
    name: str
    description: str
    risk: Risk
    parameters: dict[str, Any]  # JSON schema of the arguments
    run: Callable[[dict[str, Any], ToolContext], ToolResult]
    for_llm: bool = True  # offered to the LLM policy
    shell_args: tuple[str, ...] = ()  # arguments a shell parses: text put into them is quoted

    def check_args(self, args: dict[str, Any]) -> str | None:
        if not isinstance(args, dict):
            return "arguments must be a JSON object"
        props = self.parameters.get("properties", {})
        missing = [k for k in self.parameters.get("required", []) if k not in args]
        if missing:
            return f"missing argument(s): {', '.join(missing)}"
        unknown = [k for k in args if k not in props]
        if unknown and not self.parameters.get("additionalProperties", False):
            return f"unknown argument(s): {', '.join(unknown)} (allowed: {', '.join(props) or 'none'})"
        for k, v in args.items():
            want = props.get(k, {}).get("type")
            ok = {"string": isinstance(v, str), "number": isinstance(v, (int, float)) and not isinstance(v, bool),
                  "integer": isinstance(v, int) and not isinstance(v, bool), "boolean": isinstance(v, bool),
                  "object": isinstance(v, dict), "array": isinstance(v, list)}.get(want, True)
            if not ok:
                return f"argument {k!r} must be {want}"
        return None


class UnknownTool(KeyError):
    pass


@dataclass
class ToolRegistry:
    tools: dict[str, Tool] = field(default_factory=dict)

    def register(self, tool: Tool) -> None:
        self.tools[tool.name] = tool

    def get(self, name: str) -> Tool:
        try:
            return self.tools[name]
        except KeyError:
            raise UnknownTool(f"unknown tool {name!r}: registered tools are {', '.join(sorted(self.tools))}") from None

    def __contains__(self, name: object) -> bool:
        return name in self.tools

    def names(self) -> list[str]:
        return sorted(self.tools)

    def is_risky(self, name: str) -> bool:
        return name in self.tools and self.tools[name].risk == "risky"

    def run(self, name: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            tool = self.get(name)
        except UnknownTool as exc:
            return ToolResult(ok=False, error=str(exc.args[0]))
        problem = tool.check_args(args)
        if problem:
            return ToolResult(ok=False, error=f"{name}: {problem}")
        try:
            return tool.run(args, ctx)
        except Exception as exc:  # noqa: BLE001 - a tool failure is a result, not a crash
            return ToolResult(ok=False, error=f"{name} failed: {' '.join(str(exc).split())[:300] or type(exc).__name__}")

    def openai_tools(self) -> list[dict[str, Any]]:
        """Function definitions for the chat-completions API; every one also
        asks for the rationale and the ids it rests on (the checker reads them)."""
        out = []
        for t in sorted(self.tools.values(), key=lambda t: t.name):
            if not t.for_llm:
                continue
            params = {
                "type": "object",
                "properties": {
                    **t.parameters.get("properties", {}),
                    "rationale": {"type": "string", "description": "why this action, step by step, citing premise "
                                  "and hypothesis ids (no 'obviously')"},
                    "because": {"type": "array", "items": {"type": "string"},
                                "description": "ids of the premises/hypotheses this action rests on"},
                },
                "required": [*t.parameters.get("required", []), "rationale", "because"],
            }
            desc = t.description + (" RISKY: a person must approve it before it runs." if t.risk == "risky" else "")
            out.append({"type": "function", "function": {"name": t.name, "description": desc, "parameters": params}})
        return out


ANSWER = "{answer}"


class UnsafeTemplate(ValueError):
    """A placeholder where quoting cannot make the value plain text."""


def fill_shell(template: str, value: str, placeholder: str = ANSWER) -> str:
    """``template`` (a POSIX shell command) with ``placeholder`` replaced by
    ``value`` as literal text, quoted for the context the placeholder stands in:
    bare (``shlex.quote``), inside '...' (each ``'`` closed, escaped, reopened) or
    inside "..." (``\\ $ ` "`` escaped). Whatever the value holds (``;``, ``$(..)``,
    quotes, newlines), the shell sees one piece of text, never syntax.

    A placeholder after ``$(``, ``${``, a backquote, a here-document or a comment
    (contexts with rules of their own) raises ``UnsafeTemplate``: write it as a
    word of its own. Quoting is for the shell that runs ``cmd``: a command that
    hands its arguments to another shell (``eval``, ``sh -c``, ``ssh``) parses
    them again, which is what the person approving the exact command sees."""
    out: list[str] = []
    quote = ""  # "", "'" or '"': the quoting context at this point of the template
    hazard = ""  # the first construct whose own rules quoting does not follow
    i, n = 0, len(template)
    while i < n:
        if template.startswith(placeholder, i):
            if hazard:
                raise UnsafeTemplate(f"{placeholder} comes after {hazard} in the command {template!r}: "
                                     f"write it as a word of its own (e.g. echo {placeholder}), outside $(...), "
                                     "`...`, ${...}, here-documents and comments")
            if quote == "'":
                out.append(value.replace("'", "'\\''"))
            elif quote == '"':
                out.append("".join("\\" + c if c in '\\$`"' else c for c in value))
            else:
                out.append(shlex.quote(value))
            i += len(placeholder)
            continue
        c = template[i]
        if quote != "'":
            if c == "\\":
                out.append(template[i:i + 2])  # an escaped character (or a line continuation)
                i += 2
                continue
            if c == "`":
                hazard = hazard or "a backquote"
            elif c == "$" and template[i + 1:i + 2] in ("(", "{"):
                hazard = hazard or f"${template[i + 1]}"
        if quote == "":
            if template.startswith("<<", i):
                hazard = hazard or "a here-document"
            elif c == "#" and (i == 0 or template[i - 1] in " \t\n;&|()<>"):
                hazard = hazard or "a comment"
            elif c in "'\"":
                quote = c
        elif c == quote:
            quote = ""
        out.append(c)
        i += 1
    return "".join(out)


def _clip(text: str) -> str:
    return text if len(text) <= OUTPUT_LIMIT else text[: OUTPUT_LIMIT // 2] + "\n…\n" + text[-OUTPUT_LIMIT // 2:]


# -- built-ins --------------------------------------------------------------------------
def _recall(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    k = int(args.get("k", 5))
    result = ctx.memory.recall(args["query"], k=max(1, min(k, 20)))
    lines = [f"{h.rank}. {h.episode_id} ({h.score:.3f}): {h.snippet}" for h in result.hits]
    return ToolResult(ok=True, output="\n".join(lines) or "no memories matched",
                      data={"hits": [h.episode_id for h in result.hits], "degraded": result.degraded})


def _note(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    text = args["text"].strip()
    if not text:
        return ToolResult(ok=False, error="note: text is empty")
    digest = hashlib.blake2b(f"{ctx.loop_id}\x1f{text}".encode(), digest_size=8).hexdigest()
    ep = Episode(id=f"loop:{ctx.loop_id}:note:{digest}", source="loop", session_id=ctx.loop_id, agent="ars-loop",
                 summary=args.get("summary", "") or text[:120], text=text, topics=[ctx.goal_id] if ctx.goal_id else [],
                 meta={"loop_id": ctx.loop_id, "iteration": ctx.iteration, "kind": "note"})
    from core.govern.redact import redact_episode

    ep = redact_episode(ep)  # secrets never enter memory (the id is of the text as given: a replay finds it)
    old = ctx.memory.sqlite.get(ep.id)
    if old is not None and old.text == ep.text and old.summary == ep.summary:
        # replayed after a crash (or the same note twice): the memory already holds it
        return ToolResult(ok=True, output=f"note {ep.id} already stored", data={"episode_id": ep.id})
    ctx.memory.store([ep])
    return ToolResult(ok=True, output=f"stored note {ep.id}", data={"episode_id": ep.id})


def _wait(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    seconds = float(args["seconds"])
    if not 0 <= seconds <= 300:
        return ToolResult(ok=False, error="wait: seconds must be between 0 and 300")
    time.sleep(seconds)
    return ToolResult(ok=True, output=f"waited {seconds:g} s")


def _shell(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    cmd = args["cmd"]
    timeout = float(args.get("timeout", 60))
    cwd = args.get("cwd") or None
    try:
        proc = subprocess.run(["/bin/sh", "-c", cmd], capture_output=True, text=True, timeout=timeout, cwd=cwd)
    except subprocess.TimeoutExpired:
        return ToolResult(ok=False, error=f"shell: timed out after {timeout:g} s", data={"cmd": cmd})
    except OSError as exc:
        return ToolResult(ok=False, error=f"shell: {exc.strerror or exc}", data={"cmd": cmd})
    out = _clip((proc.stdout or "") + (proc.stderr or ""))
    return ToolResult(ok=proc.returncode == 0, output=out,
                      error="" if proc.returncode == 0 else f"exit status {proc.returncode}",
                      data={"cmd": cmd, "returncode": proc.returncode})


def _scripted(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    return ToolResult(ok=True, output=f"scripted: {args.get('action', '')}", data={"scripted": True})


def _finish(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    return ToolResult(ok=True, output=f"claimed done: {args.get('summary', '')}", data={"finish": True})


def default_registry() -> ToolRegistry:
    reg = ToolRegistry()
    reg.register(Tool("recall", "Search the agent's memory for episodes relevant to a query.", "safe",
                      {"type": "object", "properties": {"query": {"type": "string"}, "k": {"type": "integer"}},
                       "required": ["query"]}, _recall))
    reg.register(Tool("note", "Write a note into memory so later iterations and sessions can recall it.", "safe",
                      {"type": "object", "properties": {"text": {"type": "string"}, "summary": {"type": "string"}},
                       "required": ["text"]}, _note))
    reg.register(Tool("wait", "Wait a number of seconds (at most 300) before checking again.", "safe",
                      {"type": "object", "properties": {"seconds": {"type": "number"}}, "required": ["seconds"]},
                      _wait))
    reg.register(Tool("shell", "Run a shell command (/bin/sh -c) and return its output and exit status.", "risky",
                      {"type": "object", "properties": {"cmd": {"type": "string"}, "timeout": {"type": "number"},
                                                        "cwd": {"type": "string"}},
                       "required": ["cmd"]}, _shell, shell_args=("cmd",)))
    reg.register(Tool("scripted", "An action described by the goal file; its outcome is scripted.", "safe",
                      {"type": "object", "properties": {"action": {"type": "string"}}, "required": ["action"],
                       "additionalProperties": True}, _scripted, for_llm=False))
    reg.register(Tool("finish", "Claim the goal is done; the claim is verified against the success criteria.",
                      "safe", {"type": "object", "properties": {"summary": {"type": "string"}},
                               "required": ["summary"]}, _finish))
    return reg
