"""``ars hook openclaw``: what ARS's OpenClaw plugin (tui/agents/openclaw_plugin/) asks.

Two ways in, both JSON:

* ``--serve``: the long-lived process the plugin starts once per OpenClaw
  process (tui/agents/openclaw_serve.py). One request a line on stdin, one
  answer a line on stdout, matched by ``id``: the gate for every tool call
  (``{"id", "tool", "params", "cwd", "paths"}`` -> ``{"id", "verdict":
  "pass"|"hold", "reason"}``; the signed policy is read again for every call, so
  a new ``ars gate set`` applies at once; a held call goes to the one-shot
  form), and memory for every turn (``"op": "context"`` before the prompt is
  built, ``"capture"`` when the turn ended, ``"outcome"`` after a decided call
  ran, ``"search"``/``"get"`` for the memory tools; tui/agents/openclaw_memory.py).
  A tool call that passes costs a few milliseconds instead of a Python start; a
  turn's recall, one ARS kept open instead of a store opened per turn.
* one event on stdin, one answer on stdout (a fresh process per event):

  - ``{"event": "before_tool_call", "tool", "params", "session", "call_id",
    "cwd", "paths", ...}``: the gate again (authoritative), then the hold
    (tui/agents/held_call.py): an inbox request bound to this exact input and the
    wait for the supervisor's signed decision. Answers ``{"verdict": "allow"}``
    or ``{"verdict": "block", "reason"}``; with ``"mirror": true`` it first
    prints ``{"held": ID, "title", "description"}`` (the plugin mirrors the
    request into OpenClaw's own approvals) and reads one line on stdin: a
    decision made in OpenClaw (``{"openclaw": "allow-once"|"deny"|...,
    "by"}``) withdraws the ARS request saying so.
  - ``{"event": "after_tool_call"|"cancelled", "session", "call_id"}``: the
    call is over; a request still open for it is withdrawn.
  - ``{"event": "session_end", "session"}``: the session's open requests end.
  - ``{"event": "session_start", "cwd"}``: ``{"context": TEXT}``, the startup
    context (``ars rehydrate``'s open loops, next steps, memories) and the
    requests waiting in the inbox; "" when there is none (the plugin asks the
    serve process for it instead).

OpenClaw has no prompt of its own in the ARS path, so every outcome that is
not a pinned supervisor's approval is a block with its reason: no decision in
time, a reject, a forged approval, an unreadable event, ARS failing. The exit
code is 0 whenever an answer was printed; the plugin blocks on anything else.
"""

from __future__ import annotations

import json
import os
import sys

from tui.agents import held_call, hook_io

AGENT = "openclaw"
LABEL = "OpenClaw"
USAGE = "usage: ars hook openclaw [--state DIR] [--supervisor SHA256:...] [--serve]  (JSON on stdin)"
CONTEXT_LIMIT = 9_500


_say = hook_io.sayer(AGENT)


def _emit(payload: dict) -> None:
    hook_io.answer(payload)


FLOOR = 0  # the gate policy version pinned in the plugin's command (`--policy-version`): older is a rollback


def _parse_args(argv: list[str]) -> tuple[dict, str | None]:
    opts, problem = hook_io.parse(argv, USAGE, switches=("--serve",))
    global FLOOR
    FLOOR = 0 if problem else (opts["policy-version"] or 0)
    return {"state": opts["state"], "pin": opts["supervisor"], "serve": opts["serve"]}, problem


state_dir = hook_io.state_dir


def run(argv: list[str], stdin=None) -> int:
    opts, problem = _parse_args(list(argv))
    if problem:
        _say(problem)
        _emit({"verdict": "block", "reason": f"ARS could not check this tool call: {problem}"})
        return 1
    state = state_dir(opts["state"])
    if opts["serve"]:
        return serve(state, opts["pin"], stdin or sys.stdin)
    try:
        # the event is its first line: a mirrored hold keeps stdin open for OpenClaw's decision
        source = stdin or sys.stdin
        text = source.readline()
        try:
            event = json.loads(text)
        except ValueError:
            event = json.loads(text + source.read())  # an event written over several lines (by hand)
    except (OSError, ValueError, RecursionError) as exc:
        _emit({"verdict": "block", "reason": f"ARS could not read the tool call ({type(exc).__name__}), so it "
                                             "blocks it"})
        return 0
    if not isinstance(event, dict) or not isinstance(event.get("event"), str):
        _emit({"verdict": "block", "reason": "ARS got no event object, so it blocks the call"})
        return 0
    name = event["event"]
    try:
        if name == "before_tool_call":
            return before_tool_call(event, state, opts["pin"])
        if name in ("after_tool_call", "cancelled"):
            why = str(event.get("why") or ("the call ran" if name == "after_tool_call" else "the call was cancelled"))
            held_call.end_call(state, str(event.get("session") or ""), str(event.get("call_id") or ""),
                               f"{why} (OpenClaw)", _say)
            _emit({"ok": True})
            return 0
        if name == "session_end":
            held_call.end_session(state, str(event.get("session") or ""), "the OpenClaw session ended", _say)
            _emit({"ok": True})
            return 0
        if name == "session_start":
            _emit({"context": startup_context(event, state)})
            return 0
    except Exception as exc:  # noqa: BLE001 - never an allow: one line, and a block for a tool call
        if os.environ.get("ARS_DEBUG"):
            raise
        _say(f"{name} failed: {type(exc).__name__}: {exc}")
        _emit({"verdict": "block", "reason": f"ARS could not check this tool call ({type(exc).__name__}: "
                                             f"{' '.join(str(exc).split())[:200]}), so it blocks it"})
        return 0
    _emit({"verdict": "block", "reason": f"ARS does not know the event {name[:60]!r}"})
    return 0


# -- the gate ---------------------------------------------------------------------------
def _project(event: dict) -> str | None:
    p = event.get("project")
    return os.path.abspath(os.path.expanduser(p)) if isinstance(p, str) and p else None


def check(event: dict, state: str, pin: str | None):
    """(gate, matches, bound tool name, bound input) for one OpenClaw tool call."""
    from core.hook_api import gate_policy as policy  # not core.api: a call per process (core/hook_api.py)
    from tui.agents import openclaw_tools

    gate, why = policy.load(state, pin, FLOOR)
    if why:
        _say(why)
    tool = event.get("tool")
    params = event.get("params")
    if not isinstance(tool, str) or not tool or not isinstance(params, dict):
        raise ValueError("the event has no tool name and params object")
    cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
    project = _project(event) or cwd
    paths = event.get("paths") if isinstance(event.get("paths"), list) else None
    matches, bound_name, bound_input = openclaw_tools.check(gate, tool, params, project=project, state=state,
                                                             cwd=cwd, derived=paths)
    return gate, matches, bound_name, bound_input


def serve(state: str, pin: str | None, stream) -> int:
    """The plugin's long-lived process: the gate for every tool call, memory for every turn
    (tui/agents/openclaw_serve.py)."""
    from tui.agents.openclaw_serve import serve as run_serve

    return run_serve(state, pin, stream, check=check, say=_say, startup=startup_context)


def _store_of(event: dict) -> dict:
    """Where the supervisor's context is read (core/inbox/context.py: openclaw_tail): the
    agent's database under OpenClaw's state directory, and the session's id in it."""
    sid, agent = event.get("session_id") or event.get("session"), event.get("agent_id") or "main"
    if not isinstance(sid, str) or not sid or not isinstance(agent, str) or "/" in agent or agent in (".", ".."):
        return {}
    home = os.environ.get("OPENCLAW_STATE_DIR") or os.path.join(os.path.expanduser("~"), ".openclaw")
    return {"session_id": sid, "openclaw_db": os.path.join(home, "agents", agent, "agent", "openclaw-agent.sqlite")}


def before_tool_call(event: dict, state: str, pin: str | None) -> int:
    gate, matches, bound_name, bound_input = check(event, state, pin)
    if not matches:
        _emit({"verdict": "allow"})
        return 0
    tool = str(event.get("tool"))
    call = held_call.Call(agent=AGENT, label=LABEL, session=str(event.get("session") or "unknown"),
                          call_id=str(event.get("call_id") or ""), tool_name=bound_name, tool_input=bound_input,
                          meta={"openclaw_tool": tool, "cwd": event.get("cwd"), "agent_id": event.get("agent_id"),
                                "run_id": event.get("run_id"), **_store_of(event)})
    # the plugin's budget for this call (its handler timeout less a margin): the wait never outlasts it,
    # or a late approval would show in the inbox for a call OpenClaw already blocked
    wait = event.get("wait")
    wait = float(wait) if isinstance(wait, (int, float)) and not isinstance(wait, bool) and wait > 0 else None
    if event.get("mirror"):
        from tui.agents.openclaw_mirror import hold_mirrored

        outcome = hold_mirrored(call, matches, gate, state, pin, say=_say, emit=_emit, wait=wait)
    else:
        outcome = held_call.hold(call, matches, gate, state, pin, say=_say, wait=wait)
    if outcome.verdict == "allow":
        _emit({"verdict": "allow", "reason": outcome.reason, "request_id": outcome.request_id})
    else:  # OpenClaw has no prompt of its own here: "ask" is a block too, with its reason
        _emit({"verdict": "block", "reason": f"ARS: {outcome.reason}", "request_id": outcome.request_id})
    return 0


# -- session start: the startup context ---------------------------------------------------------
def startup_context(event: dict, state: str, ars=None) -> str:
    """What a session's first turn is told besides its recalled memories: requests waiting
    in the inbox and open loops (``ars rehydrate``). "" when there is neither: a block
    saying "none" costs every session's first turn for nothing."""
    if not os.path.isdir(state):
        return ""
    if ars is None:
        os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
        from core.api import ARS
        from core.api import load_settings

        with ARS(load_settings(state_dir=state), create=False) as own:
            return startup_context(event, state, own)
    from core.api import OPEN_STATUSES, render_markdown

    pending = list(ars.inbox.list("pending"))
    states, _ = ars.loop_list()
    if not pending and not any(s.status in OPEN_STATUSES for s in states):
        return ""  # the common case, paid on a session's first turn: no rehydrate (a recall per loop) for nothing
    report = ars.rehydrate(write=True)
    parts = [f"ARS memory for this session (state directory {os.path.abspath(state)}). Risky tool calls wait "
             "for the supervisor in the ARS inbox."]
    if pending:
        parts.append(f"## Waiting in the ARS inbox ({len(pending)})\n\n"
                     + "\n".join(f"- `{r.id}` {r.source} {r.risk}: {r.summary[:200]}" for r in pending[:10]))
    parts.append(render_markdown(report))
    text = "\n\n".join(p for p in parts if p)
    if len(text) > CONTEXT_LIMIT:
        tail = f"\n\n[... cut at {CONTEXT_LIMIT:,} characters; `ars rehydrate` prints all of it]"
        text = text[: CONTEXT_LIMIT - len(tail)] + tail
    return text
