"""``ars hook claude-code``: Claude Code's hooks, answered from ARS.

Claude Code runs the hook command with one event as JSON on stdin
(``session_id``, ``transcript_path``, ``cwd``, ``permission_mode``,
``hook_event_name``, and per event ``tool_name``/``tool_input``/``tool_use_id``,
``source``, ``reason``...) and reads the answer from stdout:

* ``PreToolUse``: the gate (core/inbox/gate/) for what is held whatever
  Claude Code's own permissions say (``HELD_REGARDLESS``: sensitive paths, inputs
  the gate could not read through; everything in ``bypassPermissions`` mode,
  where Claude Code never prompts). Such a match becomes an inbox request
  (``claude-code:<session>``, the exact tool input as its detail) and the hook
  waits for a person (tui/agents/held_call.py), then prints ``{"hookSpecificOutput":
  {"hookEventName": "PreToolUse", "permissionDecision": "allow"|"deny"|"ask",
  "permissionDecisionReason": ...}}``. No decision in time, an unreadable event
  or gate.toml, or ARS failing: ``ask``, never a silent allow. Anything else: exit
  0, no output.
* ``PermissionRequest`` (Claude Code is about to prompt): the rest of what the
  gate holds waits in the inbox the same way; a signed approval answers
  ``{"decision": {"behavior": "allow"}}``, a reject ``deny`` with its reason; no
  decision in time: no answer, Claude Code's prompt decides, and ``PostToolUse``
  or ``Stop`` then ends the request ("decided in the terminal").
* ``UserPromptSubmit``: what memory holds about the prompt (and the reply before it),
  from the recall daemon's ``context`` request, as ``additionalContext``; nothing when
  nothing clears the floor or no answer comes in time (tui/agents/claude_context.py).
* ``SessionStart``: the startup context (what ``ars rehydrate`` writes: open loops,
  next steps, sync health) and the requests waiting in the inbox; after a compaction
  or on resume, the context for what the session was about again.
* Capture (core/capture): ``Stop``, ``PreCompact`` and ``SessionEnd`` store what the
  transcript added since the last capture, in this process (the turn is recallable
  when the hook exits); ``PostToolUse`` starts one in the background when the last
  is over ``CAPTURE_EVERY`` s old (a long turn is memory as it goes). A transcript
  never captured and over ``FIRST_READ_MAX`` bytes is read whole in the background
  (``ars hook claude-code --capture PATH``). ``SessionEnd`` also starts ``ars ingest``
  of the transcript, detached: the catch-up (same ids: it adds nothing captured).
* ``PostToolUse`` / ``PostToolUseFailure`` of a call ARS held: what ran and how it
  ended (exit status, first lines of output) joins the memory of its decision
  (tui/agents/call_memory.py).

Anything else: one line on stderr, exit 0 (a hook must never break the agent).

This runs on every tool call in a fresh process: until a call is held, it
imports only the standard library, tree-sitter (for Bash) and, when a signed
policy exists, ``cryptography`` (``core.inbox``'s package names load lazily, so
its pydantic models are not imported); ``core.api`` is imported only on the
paths that need it.
"""

from __future__ import annotations

import json
import os
import re
import sys

from tui.agents import hook_io
from tui.agents.claude_capture import (  # noqa: F401 - spawn_ingest, ars_command: other hooks' too
    ars_command, capture_now, capture_soon, capture_transcript, ingest_transcript, spawn_ingest
)

AGENT = "claude-code"
USAGE = ("usage: ars hook claude-code [--state DIR] [--supervisor SHA256:...] [--policy-version N]  "
         "(one Claude Code hook event as JSON on stdin; --capture PATH: capture that transcript)")
# The supervisor key this hook trusts, from its own command line (`--supervisor`,
# written by `ars install claude-code`): Claude Code snapshots its hook commands at
# session start, so a running agent cannot change it. None: no decision is trusted.
PIN: str | None = None
FLOOR = 0  # the gate policy version pinned with it (`--policy-version`): an older policy is a rollback


_say = hook_io.sayer(AGENT)
_answer = hook_io.answer


def pre_tool_answer(decision: str, reason: str) -> dict:
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": decision,
                                   "permissionDecisionReason": reason}}


def _ask(reason: str) -> int:
    return _answer(pre_tool_answer("ask", reason))


def _refuse(reason: str) -> int:
    """A PreToolUse ARS could not check (a failure, not a person's silence): closed for the mode."""
    return _answer(pre_tool_answer(_closed_verdict(), reason))


# Claude Code kills a hook at its timeout, which `ars install claude-code` writes (Claude Code's default,
# written out so gate.toml's timeout can be read beside it), and then runs the call: the watchdog
# answers WATCHDOG_MARGIN before that, whatever the hook is blocked on.
PRE_TOOL_TIMEOUT = 60  # seconds
WATCHDOG_MARGIN = 6.0  # seconds
_MODE: str | None = None  # the event's permission_mode, once read


def _closed_verdict() -> str:
    """How a PreToolUse that cannot be checked is refused: ``ask`` (Claude Code's own prompt, a
    denial in print mode), but ``deny`` where Claude Code never prompts (bypassPermissions)."""
    return "deny" if _MODE in NO_PROMPT_MODES else "ask"


def _guard(event: dict) -> None:
    global _MODE
    _MODE = event.get("permission_mode") if isinstance(event.get("permission_mode"), str) else None
    name = event.get("hook_event_name")
    closed = pre_tool_answer(_closed_verdict(), "ARS could not decide this tool call in time (its state directory "
                             "was held: a lock or a file did not answer), so it is refused") \
        if name == "PreToolUse" else None  # PermissionRequest: no answer, Claude Code's prompt decides
    hook_io.guard(PRE_TOOL_TIMEOUT - WATCHDOG_MARGIN, closed, _say)


# -- arguments and state directory ------------------------------------------------
CAPTURE: str | None = None  # --capture PATH: this process captures a transcript (started by a hook)


def _parse_args(argv: list[str]) -> tuple[str | None, str | None]:
    """(state dir or None, error or None); sets ``PIN`` from ``--supervisor``, ``FLOOR``, ``CAPTURE``."""
    global PIN, FLOOR, CAPTURE
    opts, problem = hook_io.parse(argv, USAGE, values={"--capture": str})
    PIN = None if problem else opts["supervisor"]
    FLOOR = 0 if problem else (opts["policy-version"] or 0)
    CAPTURE = None if problem else opts["capture"]
    return (None, problem) if problem else (opts["state"], None)


state_dir = hook_io.state_dir


# -- the entry point -------------------------------------------------------------------
def run(argv: list[str], stdin=None) -> int:
    """Handle one hook event (``argv``: the arguments after ``hook claude-code``);
    returns the exit code: 0, or 1 for a wrong command line (never 2, which
    Claude Code reads as "block")."""
    explicit, problem = _parse_args(list(argv))
    if CAPTURE is not None and not problem:
        return capture_now(state_dir(explicit), CAPTURE, first_read_max=None)
    raw = b""
    try:
        raw = (stdin or sys.stdin.buffer).read()
    except (OSError, ValueError) as exc:
        problem = problem or f"cannot read the event from stdin ({exc})"
    if problem:  # never exit 2: to Claude Code that blocks the tool call (or the stop) with our stderr
        _say(problem)
        if _looks_like_pre_tool_use(raw):
            return _refuse(f"ARS could not check this tool call: {problem}")
        return 1
    try:
        event = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        _say(f"the event on stdin is not JSON ({' '.join(str(exc).split())[:120]}); ignored")
        if _looks_like_pre_tool_use(raw):
            return _refuse("ARS could not read this PreToolUse event (not JSON), so it cannot check the call")
        return 0
    if not isinstance(event, dict):
        _say("the event on stdin is not a JSON object; ignored")
        return 0
    name = event.get("hook_event_name")
    handler = HANDLERS.get(name) if isinstance(name, str) else None
    if handler is None:
        _say(f"event {str(name)[:60]!r} is not handled ({', '.join(HANDLERS)} are); ignored")
        return 0
    _guard(event)
    state = state_dir(explicit)
    try:
        return handler(event, state)
    except Exception as exc:  # noqa: BLE001 - never break the agent: one line, and never an allow
        if os.environ.get("ARS_DEBUG"):
            raise
        _say(f"{name} failed: {type(exc).__name__}: {exc}")
        if name == "PreToolUse":
            return _refuse(f"ARS could not check this tool call ({type(exc).__name__}: "
                        f"{' '.join(str(exc).split())[:200]})")
        return 0


def _looks_like_pre_tool_use(raw: bytes) -> bool:
    return b"PreToolUse" in raw[:1 << 16] or b"PreToolUse" in raw[-(1 << 16):]


# -- PreToolUse: the gate ----------------------------------------------------------------
# What PreToolUse holds whatever Claude Code's own permissions say: sensitive paths (ARS's state, the
# policy, agent settings, git hooks, rc files, ~/.ssh...) and inputs the gate could not read through.
# Everything else the gate would hold waits for PermissionRequest, which fires exactly when Claude Code
# would prompt (a call its own allow rules or mode let through is the user's choice, as without ARS).
HELD_REGARDLESS = frozenset({"sensitive-path", "out-of-time", "too-long", "too-large"})
# modes in which Claude Code never prompts (so PermissionRequest never fires): PreToolUse holds it all
NO_PROMPT_MODES = frozenset({"bypassPermissions"})


def _checked(event: dict, state: str):
    """(tool_name, tool_input, matches, gate, regardless), or None when the event has no tool call."""
    tool_name = event.get("tool_name")
    tool_input = event.get("tool_input")
    if not isinstance(tool_name, str) or not tool_name or not isinstance(tool_input, dict):
        return None
    from core.hook_api import gate_policy as policy  # not core.api: a call per process (core/hook_api.py)

    gate, why = policy.load(state, PIN, FLOOR)  # the newest signed gate.toml, else the last good one
    if why:
        _say(why)
    cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
    # the project is what Claude Code says it is, never the event's cwd (the agent moves that with `cd`);
    # without CLAUDE_PROJECT_DIR (a hook run by hand) the cwd stands in, and every hold says so
    project = os.environ.get("CLAUDE_PROJECT_DIR") or None
    matches = gate.check(tool_name, tool_input, project_dir=project or cwd, state_dir=state, cwd=cwd)
    if matches and project is None:
        for m in matches:
            m.reason += " (project directory taken from the event's cwd: CLAUDE_PROJECT_DIR is not set)"
    regardless = event.get("permission_mode") in NO_PROMPT_MODES or any(m.rule in HELD_REGARDLESS for m in matches)
    return tool_name, tool_input, matches, gate, regardless


def pre_tool_use(event: dict, state: str) -> int:
    checked = _checked(event, state)
    if checked is None:
        _say("PreToolUse without a tool_name and a tool_input object")
        return _refuse("ARS could not read this tool call (no tool_name or tool_input), so it cannot check it")
    tool_name, tool_input, matches, gate, regardless = checked
    if not matches or not regardless:
        return 0  # passes, or waits for PermissionRequest if Claude Code would prompt
    return _hold(event, tool_name, tool_input, matches, gate, state)


def _hold(event: dict, tool_name: str, tool_input: dict, matches: list, gate, state: str) -> int:
    """A held call (tui/agents/held_call.py): only an approval signed by the pinned
    supervisor key for this request and this input becomes ``allow``; anything else
    at most ``ask``."""
    from tui.agents.held_call import hold

    outcome = hold(_call(event, tool_name, tool_input, str(event.get("tool_use_id") or "")), matches, gate, state,
                   PIN, say=_say)
    if outcome.verdict == "ask":
        return _ask(f"{outcome.reason}; answer this prompt instead")
    return _answer(pre_tool_answer(outcome.verdict, outcome.reason))


def _call(event: dict, tool_name: str, tool_input: dict, call_id: str):
    from tui.agents.held_call import Call

    return Call(agent=AGENT, label="Claude Code", session=str(event.get("session_id") or "unknown"),
                call_id=call_id, tool_name=tool_name, tool_input=tool_input,
                meta={"cwd": event.get("cwd"), "permission_mode": event.get("permission_mode"),
                      "transcript_path": event.get("transcript_path"), "event": event.get("hook_event_name")})


def input_key(tool_name: object, tool_input: object) -> str:
    """A call's id for PermissionRequest, whose event carries no tool_use_id: its tool and
    exact input (PostToolUse carries both, so it finds the request with one stat)."""
    import hashlib

    text = json.dumps([tool_name, tool_input], sort_keys=True, ensure_ascii=False, default=str)
    return "input:" + hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:32]


# -- PermissionRequest: Claude Code is about to prompt ------------------------------------------
def permission_request(event: dict, state: str) -> int:
    """Claude Code would prompt for this call. The gate passes it, or PreToolUse held it already
    (and answered ``ask``): no answer, the prompt shows. Otherwise it is held in the ARS inbox: a
    signed approval answers ``allow``, a reject ``deny`` (its reason to the model); no decision
    in time: no answer (Claude Code's prompt decides; in print mode that is a denial), and the
    request stays pending until PostToolUse or Stop settles it ("decided in the terminal")."""
    checked = _checked(event, state)
    if checked is None:
        _say("PermissionRequest without a tool_name and a tool_input object: Claude Code's prompt decides")
        return 0
    tool_name, tool_input, matches, gate, regardless = checked
    if not matches or regardless:
        return 0
    from tui.agents.held_call import hold

    call_id = str(event.get("tool_use_id") or "") or input_key(tool_name, tool_input)
    outcome = hold(_call(event, tool_name, tool_input, call_id), matches, gate, state, PIN, say=_say,
                   give_up="leave")
    if outcome.verdict == "ask":
        _say(f"{outcome.reason}; Claude Code's own prompt decides")
        return 0
    _say(outcome.reason)
    decision = {"behavior": outcome.verdict}
    if outcome.verdict == "deny":
        decision["message"] = outcome.reason
    return _answer({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}})


def post_tool_use(event: dict, state: str) -> int:
    """The call ran (Claude Code's own prompt let it, or ARS did): a request still open for it
    (its hook was killed, or PermissionRequest left it to the prompt) ends: decided in the
    terminal. A call ARS held gets its outcome in memory. Otherwise two stats and one failed
    open per id (every tool call runs this), and now and then a capture in the background."""
    return _after_tool(event, state, *_result(event))


def post_tool_failure(event: dict, state: str) -> int:
    """``PostToolUseFailure``: the call ran and failed (or was interrupted)."""
    error = event.get("error") if isinstance(event.get("error"), str) else ""
    code = re.match(r"Exit code (\d+)", error)
    status = int(code.group(1)) if code else ("interrupted" if event.get("is_interrupt") else "error")
    return _after_tool(event, state, status, error)


def _result(event: dict) -> tuple[object, str]:
    """(status, output head) of a call that succeeded: Bash's stdout and stderr, else the response as text."""
    response = event.get("tool_response")
    if isinstance(response, dict) and ("stdout" in response or "stderr" in response):
        out = "\n".join(str(response.get(k) or "") for k in ("stdout", "stderr") if response.get(k))
        return ("interrupted" if response.get("interrupted") else 0), out
    if isinstance(response, str):
        return "ok", response
    return "ok", json.dumps(response, ensure_ascii=False, default=str)[:4000] if response is not None else ""


def _after_tool(event: dict, state: str, status, output: str) -> int:
    from tui.agents.call_memory import linked, outcome
    from tui.agents.held_call import end_call

    session = str(event.get("session_id") or "unknown")
    ids = (str(event.get("tool_use_id") or ""), input_key(event.get("tool_name"), event.get("tool_input")))
    for call_id in ids:
        end_call(state, session, call_id, "decided in the terminal: the call ran (Claude Code's own prompt let it)",
                 _say)
    request_id = linked(state, session, ids)
    if request_id:
        outcome(state, request_id, status, output, f"Claude Code's {event.get('hook_event_name')} hook", _say,
                done=(session, ids))
    capture_soon(event, state)
    return 0


def stop_session(event: dict, state: str) -> int:
    """Stop / SessionEnd: end the session's requests still open (and remember them), capture
    the turn; SessionEnd also starts the catch-up ingest of the transcript."""
    from tui.agents.call_memory import remember_all, unsettled
    from tui.agents.held_call import end_session

    session = str(event.get("session_id") or "unknown")
    open_before = unsettled(state, session)
    end_session(state, session,
                "decided in the terminal: the Claude Code session "
                + ("ended" if event.get("hook_event_name") == "SessionEnd" else "stopped") + " without running it",
                _say)
    remember_all(state, open_before, _say)
    capture_transcript(event, state)
    if event.get("hook_event_name") == "SessionEnd":
        return ingest_transcript(event, state)
    return 0


def pre_compact(event: dict, state: str) -> int:
    """Before a compaction: everything so far is memory (the compacted context can ask for it)."""
    capture_transcript(event, state)
    return 0


def user_prompt_submit(event: dict, state: str) -> int:
    from tui.agents.claude_context import user_prompt

    return user_prompt(event, state, _say, _answer)


# -- SessionStart: the startup context (tui/agents/claude_context.py) -------------------------------
def session_start(event: dict, state: str) -> int:
    from tui.agents.claude_context import session_start as start

    return start(event, state, _say, _answer)


HANDLERS = {"PreToolUse": pre_tool_use, "PermissionRequest": permission_request, "PostToolUse": post_tool_use,
            "PostToolUseFailure": post_tool_failure, "UserPromptSubmit": user_prompt_submit,
            "SessionStart": session_start, "PreCompact": pre_compact,
            "Stop": stop_session, "SessionEnd": stop_session}
