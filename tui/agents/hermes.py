"""``ars hook hermes``: Hermes Agent's shell hooks, answered from ARS.

Hermes (agent/shell_hooks.py, 0.19) runs the hook command with one event as
JSON on stdin (``hook_event_name``, ``tool_name``, ``tool_input``,
``session_id``, ``cwd``, ``extra``: ``tool_call_id``, ``status``...) and reads
stdout. For ``pre_tool_call`` its shell-hook bridge keeps only a block
(``{"action": "block", "message": ...}``, the message becomes the tool result
the model reads); empty output lets the call run. (A Python plugin may also
answer ``approve`` to escalate to Hermes' own prompt; the shell bridge drops it,
so this hook has allow and block only.)

* ``pre_tool_call``: Hermes' tool (``terminal``, ``write_file``, ``patch``,
  ``read_file``, ``search_files``, ``web_extract``, ``browser_navigate``,
  ``mcp__<server>__<tool>``...) is put in the gate's words (Bash, Write, Edit,
  Read, Grep, WebFetch, mcp__server__tool: ``as_gate_calls``) and checked by
  core/inbox/gate/. Nothing matches: no output, the call runs. A match is
  held in the ARS inbox (tui/agents/held_call.py, source ``hermes:<session>``)
  and only an approval signed by the pinned supervisor key lets it run;
  everything else blocks: a reject, no decision in time, an unreadable event,
  a gate that cannot run, ARS failing. Fail closed: Hermes runs the call when a
  hook prints nothing, times out or dies, so every path here prints a block
  unless the gate passed the call or the supervisor approved it, and the wait
  ends ``MARGIN`` seconds before Hermes' own hook timeout (``--timeout``, which
  ``ars install hermes`` writes beside Hermes' ``timeout:``).
* ``post_tool_call``: the call is over; a request its hook left (the hook was
  killed) is withdrawn, and an approved call's exit and output head join the
  memory of its decision (tui/agents/hermes_outcome.py).
* ``on_session_end`` / ``on_session_finalize``: the session's open requests are
  withdrawn and ``ars ingest <HERMES_HOME>/state.db`` starts detached (the
  pipeline skips what it already has).

Anything else: one line on stderr, exit 0.

``--serve`` is not a hook: it is the long-lived process ARS's memory provider for
Hermes starts (tui/agents/hermes_serve.py).
"""

from __future__ import annotations

import json
import os
import sys

from tui.agents import hook_io

AGENT = "hermes"
LABEL = "Hermes"
USAGE = ("usage: ars hook hermes [--state DIR] [--supervisor SHA256:...] [--policy-version N] [--timeout SECONDS]  "
         "(one Hermes shell-hook event as JSON on stdin) | ars hook hermes --serve [--state DIR]  "
         "(ARS's memory provider's process)")
HERMES_TIMEOUT = 60   # s: Hermes' default shell-hook timeout, when --timeout is not given
MARGIN = 5.0          # s: the hook answers this long before Hermes would kill it (a killed hook lets the call run)
WATCHDOG_MARGIN = 2.0  # s: the watchdog's answer, if the wait itself is stuck (tui/agents/watchdog.py)
# Hermes' own tools that change nothing outside Hermes (its todo list, questions to the user, searches
# of its own sessions and skills): they pass without the gate, as Claude Code's Task/TodoWrite do
HARMLESS = frozenset({"todo", "clarify", "memory", "session_search", "skills_list", "skill_view", "web_search",
                      "x_search", "read_terminal", "delegate_task", "project_list", "kanban_list", "kanban_show"})
# ARS's own memory provider's tools (tui/agents/hermes_provider/): reading ARS's memory is never held by ARS
# (its MCP tools, mcp__ars__recall..., pass through the gate's built-in MCP allow-list)
PROVIDER_TOOLS = frozenset({"ars_recall", "ars_get"})


_say = hook_io.sayer(AGENT)
_answer = hook_io.answer


def _block(message: str) -> int:
    return _answer({"action": "block", "message": message})


class Args:
    __slots__ = ("state", "pin", "timeout", "floor", "serve")

    def __init__(self, state: str | None = None, pin: str | None = None, timeout: float = HERMES_TIMEOUT,
                 floor: int = 0, serve: bool = False) -> None:
        self.state = state
        self.pin = pin
        self.timeout = timeout
        self.floor = floor  # --policy-version: an older gate policy is a rollback
        self.serve = serve


def _timeout(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise ValueError(f"--timeout {value!r} is not a number of seconds") from None
    if not seconds > MARGIN:
        raise ValueError(f"--timeout must be more than {MARGIN:g} s (Hermes' hook timeout for this hook)")
    return seconds


def parse_args(argv: list[str]) -> tuple[Args, str | None]:
    opts, problem = hook_io.parse(argv, USAGE, values={"--timeout": _timeout}, switches=("--serve",))
    if problem:
        return Args(), problem
    return Args(opts["state"], opts["supervisor"], opts["timeout"] or HERMES_TIMEOUT, opts["policy-version"] or 0,
                opts["serve"]), None


# -- the entry point -------------------------------------------------------------------
def run(argv: list[str], stdin=None) -> int:
    """Handle one Hermes hook event; the exit code (0, or 1 for a wrong command line
    outside pre_tool_call). Hermes reads stdout whatever the exit code."""
    args, problem = parse_args(list(argv))
    if args.serve and not problem:
        from tui.agents.hermes_serve import serve

        return serve(hook_io.state_dir(args.state), args.pin)
    raw = b""
    try:
        raw = (stdin or sys.stdin.buffer).read()
    except (OSError, ValueError) as exc:
        problem = problem or f"cannot read the event from stdin ({exc})"
    pre = b"pre_tool_call" in raw[:1 << 16] or b"pre_tool_call" in raw[-(1 << 16):]
    if problem:
        _say(problem)
        if pre:
            return _block(f"BLOCKED: ARS could not check this tool call ({problem}); fix the hook command in "
                          "Hermes' config.yaml (`ars install hermes`)")
        return 1
    try:
        event = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        _say(f"the event on stdin is not JSON ({' '.join(str(exc).split())[:120]}); ignored")
        return _block("BLOCKED: ARS could not read this tool call (not JSON), so it cannot check it") if pre else 0
    if not isinstance(event, dict):
        _say("the event on stdin is not a JSON object; ignored")
        return _block("BLOCKED: ARS could not read this tool call, so it cannot check it") if pre else 0
    name = event.get("hook_event_name")
    handler = HANDLERS.get(name) if isinstance(name, str) else None
    if handler is None:
        _say(f"event {str(name)[:60]!r} is not handled ({', '.join(HANDLERS)} are); ignored")
        return _block("BLOCKED: ARS could not tell which hook event this is") if pre else 0
    from tui.agents.claude_code import state_dir

    # Hermes runs a call whose hook timed out: answer a block before that, whatever blocks this process
    hook_io.guard(args.timeout - WATCHDOG_MARGIN,
                  {"action": "block", "message": "BLOCKED: ARS could not decide this tool call in time (its state "
                   "directory was held: a lock or a file did not answer)"} if name == "pre_tool_call" else None, _say)
    state = state_dir(args.state)
    try:
        return handler(event, state, args)
    except Exception as exc:  # noqa: BLE001 - never break the agent; and never let a gated call through
        if os.environ.get("ARS_DEBUG"):
            raise
        _say(f"{name} failed: {type(exc).__name__}: {exc}")
        if name == "pre_tool_call":
            return _block(f"BLOCKED: ARS could not check this tool call ({type(exc).__name__}: "
                          f"{' '.join(str(exc).split())[:200]})")
        return 0


def _extra(event: dict) -> dict:
    extra = event.get("extra")
    return extra if isinstance(extra, dict) else {}


# -- pre_tool_call: the gate -------------------------------------------------------------------
def as_gate_calls(tool_name: str, tool_input: dict) -> list[tuple[str, dict]]:
    """Hermes' call as the gate's (tool, input) pairs; [] for Hermes' harmless tools. A call
    that touches several things (a V4A patch of three files, web_extract of two URLs) is
    one pair each; a tool the gate does not know keeps its Hermes name (held as unknown
    unless gate.toml's [allow] tools names it)."""
    if tool_name in HARMLESS or tool_name in PROVIDER_TOOLS:
        return []
    if tool_name == "terminal":
        return [("Bash", {"command": tool_input.get("command")})]
    if tool_name == "write_file":
        return [("Write", {"file_path": tool_input.get("path"), "content": tool_input.get("content")})]
    if tool_name == "read_file":
        return [("Read", {"file_path": tool_input.get("path")})]
    if tool_name == "search_files":
        tool = "Glob" if tool_input.get("target") == "files" else "Grep"
        return [(tool, {"path": tool_input.get("path") or None, "pattern": tool_input.get("pattern")})]
    if tool_name == "patch":
        if tool_input.get("mode", "replace") == "replace":
            return [("Edit", {"file_path": tool_input.get("path"), "old_string": tool_input.get("old_string"),
                              "new_string": tool_input.get("new_string")})]
        files = patch_files(tool_input.get("patch"))
        # a patch whose files cannot be read is an Edit without a path: the gate holds it
        return [("Edit", {"file_path": f}) for f in files] or [("Edit", {"file_path": None})]
    if tool_name in ("web_extract", "browser_navigate"):
        urls = tool_input.get("urls") if tool_name == "web_extract" else [tool_input.get("url")]
        urls = urls if isinstance(urls, list) and urls else [None]
        return [("WebFetch", {"url": u if isinstance(u, str) else None}) for u in urls]
    if tool_name.startswith("mcp__"):
        # Hermes 0.19 names MCP tools as Claude Code does, mcp__<server>__<tool> (tools/mcp_tool.py:
        # mcp_prefixed_tool_name): already the gate's word
        return [(tool_name, dict(tool_input))]
    if tool_name.startswith("mcp_") and "_" in tool_name[4:]:
        # older Hermes: mcp_<server>_<tool>; a server with "_" in its name splits wrongly,
        # which only misses an [allow] mcp entry (held), never passes more
        server, _, tool = tool_name[4:].partition("_")
        return [(f"mcp__{server}__{tool}", dict(tool_input))]
    return [(tool_name, dict(tool_input))]


def patch_files(patch: object) -> list[str]:
    """The files a V4A patch touches (``*** Update/Add/Delete File: X``, ``*** Move to: X``)."""
    if not isinstance(patch, str):
        return []
    files = []
    for line in patch.splitlines():
        for head in ("*** Update File:", "*** Add File:", "*** Delete File:", "*** Move to:"):
            if line.startswith(head) and line[len(head):].strip():
                files.append(line[len(head):].strip())
    return files


def _in_hermes_home(path: object, cwd: str | None) -> list:
    """A file tool reaching into a $HERMES_HOME other than ~/.hermes (whose config.yaml the gate
    already holds): its config.yaml holds these hooks, so the agent could drop them for its next
    session. (A terminal command doing the same is not caught here: the gate knows ~/.hermes only.)"""
    home = hermes_home()
    if not isinstance(path, str) or not path or home == os.path.abspath(os.path.expanduser("~/.hermes")):
        return []
    full = os.path.realpath(os.path.join(cwd or os.getcwd(), os.path.expanduser(path)))
    if full != os.path.realpath(home) and not full.startswith(os.path.realpath(home) + os.sep):
        return []
    from core.hook_api import GateMatch as Match  # not core.api: a call per process (core/hook_api.py)

    return [Match("sensitive-path", "high", f"touches Hermes' home {home} (its config.yaml holds ARS's hooks)",
                  path[:200])]


def pre_tool_call(event: dict, state: str, args: Args) -> int:
    tool_name = event.get("tool_name")
    tool_input = event.get("tool_input")
    if not isinstance(tool_name, str) or not tool_name or not isinstance(tool_input, dict):
        _say("pre_tool_call without a tool_name and a tool_input object")
        return _block("BLOCKED: ARS could not read this tool call (no tool_name or tool_input), so it cannot "
                      "check it")
    calls = as_gate_calls(tool_name, tool_input)
    if not calls:
        return 0
    from core.hook_api import gate_policy as policy  # not core.api: a call per process (core/hook_api.py)

    gate, why = policy.load(state, args.pin, args.floor)  # the newest signed gate.toml, else the last good one
    if why:
        _say(why)
    cwd = event.get("cwd") if isinstance(event.get("cwd"), str) and event.get("cwd") else None
    # the project is Hermes' working directory (its process's, which the model's commands do not move);
    # a terminal call's own workdir only resolves its relative paths
    workdir = tool_input.get("workdir") if tool_name == "terminal" else None
    matches: list = []
    for gate_tool, gate_input in calls:
        matches += gate.check(gate_tool, gate_input, project_dir=cwd, state_dir=state,
                              cwd=workdir if isinstance(workdir, str) and workdir else cwd)
        matches[:0] = _in_hermes_home(gate_input.get("file_path"), cwd)  # high risk: first
    if not matches:
        return 0
    from tui.agents.held_call import Call, hold

    # what a person reads and the approval signs: a plain terminal command as itself (Bash), any
    # other call as Hermes' whole input under Hermes' tool name (a workdir changes what runs)
    plain = tool_name == "terminal" and set(tool_input) <= {"command", "timeout", "background", "pty", "notify_on_complete"}
    extra = _extra(event)
    call = Call(agent=AGENT, label=LABEL, session=str(event.get("session_id") or "unknown"),
                call_id=str(extra.get("tool_call_id") or ""), tool_name="Bash" if plain else tool_name,
                tool_input=tool_input,
                meta={"cwd": cwd, "hermes_tool": tool_name, "task_id": extra.get("task_id"),
                      "turn_id": extra.get("turn_id"), "session_id": str(event.get("session_id") or ""),
                      # where the supervisor's context comes from (core/inbox/context.py: hermes_tail)
                      "hermes_db": os.path.join(hermes_home(), "state.db")})
    outcome = hold(call, matches, gate, state, args.pin, wait=max(1.0, args.timeout - MARGIN), say=_say)
    from tui.agents.hermes_outcome import remember_decision

    remember_decision(state, call.session, call.call_id, outcome.request_id, outcome.verdict, args.pin, _say)
    if outcome.verdict == "allow":
        _say(outcome.reason)
        return 0  # Hermes runs a call no hook blocked
    if outcome.verdict == "ask":
        return _block(f"BLOCKED: {outcome.reason}. Do not retry it unchanged; tell the user it needs the "
                      "supervisor's approval in the ARS inbox")
    return _block(f"BLOCKED: {outcome.reason}")


# -- after the call, and at the session's end -------------------------------------------------
def post_tool_call(event: dict, state: str, args: Args) -> int:
    """The call is over (it ran, failed or was blocked): a request its hook left is withdrawn;
    an approved call's outcome goes into the memory of its decision (tui/agents/hermes_outcome.py)."""
    from tui.agents.held_call import end_call
    from tui.agents.hermes_outcome import record_outcome

    status = _extra(event).get("status")
    end_call(state, str(event.get("session_id") or "unknown"), str(_extra(event).get("tool_call_id") or ""),
             f"the call is over in Hermes (status {status or 'unknown'})", _say)
    record_outcome(state, event, _say)
    return 0


def session_end(event: dict, state: str, args: Args) -> int:
    """End the session's open requests, then ingest Hermes' sessions in the background."""
    from tui.agents.held_call import end_session

    end_session(state, str(event.get("session_id") or "unknown"), "the Hermes session ended", _say)
    home = hermes_home()
    db = os.path.join(home, "state.db")  # the store itself: its format is known, and nothing changed is fast
    if not os.path.isfile(db):
        _say(f"no Hermes store at {db}: nothing to ingest")
        return 0
    from tui.agents.claude_code import spawn_ingest

    spawn_ingest(state, db, fmt=None)
    return 0


def hermes_home() -> str:
    """Where Hermes keeps state.db: $HERMES_HOME (Hermes passes its environment on), else ~/.hermes."""
    return os.path.abspath(os.path.expanduser(os.environ.get("HERMES_HOME") or "~/.hermes"))


HANDLERS = {"pre_tool_call": pre_tool_call, "post_tool_call": post_tool_call, "on_session_end": session_end,
            "on_session_finalize": session_end}
