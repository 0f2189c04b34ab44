"""A held tool call: one inbox request bound to one exact call, and the wait for
the supervisor's signed decision. Agent-neutral: Claude Code's, Hermes' and
OpenClaw's hooks all hold through here and only translate the outcome into
their agent's answer.

The API::

    call = Call(agent="hermes", label="Hermes", session=..., call_id=...,
                tool_name="Bash", tool_input={"command": ...}, meta={...})
    outcome = hold(call, matches, gate, state, pin, say=say)
    outcome.verdict   # "allow" | "deny" | "ask"
    outcome.reason    # one line for the agent (and its model) to read
    outcome.request_id

    end_call(state, session, call_id, why)   # the call ran / was answered elsewhere
    end_session(state, session, why)         # the session stopped: end what it left

* ``matches`` and ``gate`` come from ``core.inbox.policy.load(state, pin)`` and
  ``gate.check(...)`` (``tool_name``/``tool_input`` in the gate's vocabulary:
  Bash/Write/Edit/Read/WebFetch/mcp__...). The request's source is
  ``<agent>:<session>``; its detail is exactly what will run (a Bash command
  itself, other tools' input as JSON) and the decision must sign that text's
  hash (``input_hash``) and the hash of what the request showed (``shown_hash``).
* ``allow`` only for an approval signed by the pinned key (``pin``) for this
  request and this input. A decision signed by any other key is refused loudly
  (``ars.inbox.refuse``: set aside, the wait goes on for the supervisor). No
  decision before ``wait`` seconds (default ``gate.timeout``): the request is
  expired and the outcome is ``ask``. A reject or a response: ``deny``. Without a
  pin an approval is at most ``ask``. An agent without a prompt of its own
  (Hermes) turns ``ask`` into a block.
* While it waits, ``<state>/inbox/calls/<session hash>.<call hash>`` holds the
  request id: if the hook is killed, ``end_call``/``end_session`` find it with one
  stat and withdraw the request (``give_up="leave"`` leaves request and marker after
  an ``ask``, so the agent's later event settles the request its prompt decided).

Imports of ``core.api`` happen only inside ``hold``/``end_*``: a hook that lets a
call pass never pays for pydantic.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from typing import Callable

CALLS = "calls"  # <state>/inbox/calls/<session hash>.<call hash>: a held call's request id, while it waits
SETTLE_WINDOW = 900.0  # s: how long a request left to the agent's prompt stays pending at most (then it expires)


@dataclass
class Call:
    """One tool call as an agent's hook saw it (``tool_name``/``tool_input`` in the gate's words)."""
    agent: str                 # "claude-code", "hermes", "openclaw": the request's source prefix
    label: str                 # "Claude Code": how messages name the agent
    session: str
    call_id: str               # the agent's id for this call (tool_use_id, tool_call_id); "" when none
    tool_name: str
    tool_input: dict
    meta: dict = field(default_factory=dict)  # extra request metadata (cwd, the agent's own tool name...)


@dataclass
class Outcome:
    verdict: str               # "allow" | "deny" | "ask"
    reason: str
    request_id: str | None = None
    note: str = ""             # the decider's note, when there was one


def _quiet(message: str) -> None:
    pass


def hold(call: Call, matches: list, gate, state: str, pin: str | None, *, wait: float | None = None,
         say: Callable[[str], None] = _quiet, give_up: str = "expire") -> Outcome:
    """``_hold``, then the decision becomes memory (tui/agents/call_memory.py)."""
    outcome = _hold(call, matches, gate, state, pin, wait=wait, say=say, give_up=give_up)
    from tui.agents.call_memory import remember

    remember(state, call, outcome, pin, say)
    return outcome


def _hold(call: Call, matches: list, gate, state: str, pin: str | None, *, wait: float | None = None,
          say: Callable[[str], None] = _quiet, give_up: str = "expire") -> Outcome:
    """Create the request for ``call`` and wait for its decision (see the module's docstring).

    ``give_up``: what happens to the request when the wait ends without a decision:
    ``"expire"`` ends it there; ``"leave"`` leaves it pending, with its marker, for the
    agent's own prompt to decide (``end_call``/``end_session`` settle it afterwards)."""
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    from core.api import ARS
    from core.api import load_settings
    from core.api import MAX_DETAIL, MAX_META, MAX_SUMMARY
    from core.api import SETUP_HINT, input_hash, short
    from core.api import new_request_id
    from core.api import CorruptRequest

    timeout = float(gate.timeout if wait is None else min(wait, gate.timeout))
    first = matches[0]
    session = str(call.session or "unknown")[:120]
    call_id = str(call.call_id or "")[:200]
    tool_name, tool_input = call.tool_name, call.tool_input
    detail, full = detail_of(tool_name, tool_input, MAX_DETAIL)
    exact = input_hash(tool_name, full if full is not None else detail)  # what an approval must have signed
    rules = ", ".join(m.rule for m in matches)
    what = first.excerpt or _first_line(detail)
    summary = f"{call.label} {tool_name}: {what} ({first.reason})"
    if len(summary) > MAX_SUMMARY:
        summary = summary[:MAX_SUMMARY - 1] + "…"
    meta = {"tool_name": tool_name, "tool_use_id": call_id, **call.meta, "session_id": session, "rules": rules,
            "reasons": [m.reason for m in matches][:8]}
    if len(json.dumps(meta, ensure_ascii=False, default=str)) > MAX_META:
        meta = {"tool_name": tool_name[:200], "rules": rules[:1000], "session_id": session}
    left = False
    with ARS(load_settings(state_dir=state), create=True) as ars:
        # The marker names the request before the request exists: a hook killed at any point
        # after the request appears leaves a marker the call's next event ends it by (a marker
        # naming a request never made is dropped there).
        request_id = new_request_id()
        marker = _call_marker(ars.state_dir, session, call_id, request_id)
        try:
            req = ars.request_approval(f"{call.agent}:{session}", summary, details=detail, risk=first.risk,
                                       kind="approval", meta=meta, binds=tool_name,
                                       expires_in=timeout + (SETTLE_WINDOW if give_up == "leave" else 0),
                                       exact=full if full is not None else detail, request_id=request_id)
        except BaseException:
            _drop_marker(marker)
            raise
        # what the request shows a person, as created here (an agent may rewrite the file, not this)
        shown = req.shown_hash()
        try:
            if full is not None:
                _keep_full_input(ars.state_dir, req.id, tool_input, full, say)
            say(f"{tool_name} held by {rules}: waiting up to {timeout:g} s in the ARS inbox as {req.id} "
                f"(ars inbox approve {req.id} | ars inbox reject {req.id} --reason ...)")
            deadline = time.monotonic() + timeout
            refused: list[str] = []
            races = 0
            while True:
                done = ars.inbox.wait(req.id, max(0.0, deadline - time.monotonic()), poll=0.02)  # an lstat / 20 ms
                d = done.decision
                if d is None:
                    why = f"; refused meanwhile: {refused[-1]}" if refused else ""
                    if give_up == "leave":
                        left = True
                        return Outcome("ask", f"{first.reason}: held for a person in the ARS inbox as {req.id}, "
                                              f"with no valid decision after {timeout:g} s{why}; it is decided in "
                                              "the agent's own prompt now, and the request ends with that", req.id)
                    if ars.inbox_end(req.id, "expire", f"the {call.label} hook waited {timeout:g} s and gave "
                                                       f"up{why}"):
                        return Outcome("ask", f"{first.reason}: held for a person in the ARS inbox as {req.id}, "
                                              f"with no valid decision after {timeout:g} s{why}; the request has "
                                              "expired there", req.id)
                    races += 1
                    if races > 3:  # the name is taken but never reads as a decision: nothing to act on
                        return Outcome("deny", f"{req.id} could neither be decided nor expired in the ARS inbox, "
                                               "so the call is refused", req.id)
                    continue  # a decision raced the expiry: it stands (read it next time round)
                if d.verdict != "approve" or pin is None:
                    break
                problem = refusal(d, req.id, exact, shown, pin)
                if not problem:
                    break
                # never act on it, and do not let it take the supervisor's place: set it aside, wait on
                ars.inbox.refuse(req.id, problem)
                refused.append(problem)
                say(f"REFUSED the approval of {req.id}: {problem} (pinned supervisor key {short(pin)}); "
                    "still waiting for the supervisor")
        except CorruptRequest as exc:  # a symlink, FIFO or junk where the decision goes: planted, never "decided"
            say(f"REFUSED {req.id}: {exc}")
            return Outcome("deny", f"the decision of {req.id} in the ARS inbox is damaged or not a file ARS wrote "
                                   f"({exc.error}), so the call is refused", req.id)
        finally:
            if not left:
                _drop_marker(marker)
    d = done.decision
    assert d is not None
    by = f" by {d.decided_by}" if d.decided_by else ""
    if d.ended:
        return Outcome("ask", d.describe(req.id), req.id)
    if d.verdict == "approve":
        if pin is None:
            say(f"the approval of {req.id} is not used: this hook pins no supervisor key")
            return Outcome("ask", f"approved in the ARS inbox ({req.id}){by}, but this hook cannot verify who "
                                  f"approved (no supervisor key pinned: {SETUP_HINT})", req.id)
        note = f": {d.note}" if d.note else ""
        return Outcome("allow", f"approved in the ARS inbox ({req.id}), signed by the supervisor {short(pin)}{note}",
                       req.id, d.note or "")
    if d.verdict == "reject":  # a refusal needs no signature: nobody gains by forging one
        return Outcome("deny", f"rejected in the ARS inbox ({req.id}){by}: {d.note or 'no reason given'}",
                       req.id, d.note or "")
    # a response (or anything else) is not an approval: the agent reads it and does not run the call
    return Outcome("deny", f"not approved; a person answered in the ARS inbox ({req.id}){by}: {d.note}",
                   req.id, d.note or "")


def refusal(d, request_id: str, exact: str, shown: str, pin: str | None) -> str:
    """Why an approval must not be acted on ("" when it is the pinned supervisor's,
    for this request, this exact input and the text the request showed, in time)."""
    from core.api import verify_decision

    payload, why = verify_decision(d.model_dump(mode="json"), pin=pin, request_id=request_id, input_hash=exact,
                                   shown_hash=shown)
    if payload is None:
        return why
    return "" if payload.get("verdict") == "approve" else "it was not signed as an approval"


# -- a held call's marker: the agent's later events end a request its hook left behind ------
def _marker_name(session: str, call_id: str) -> str:
    return hashlib.sha256(f"{session}\0{call_id}".encode("utf-8", "replace")).hexdigest()[:32]


def marker_path(state, session: str, call_id: str) -> str:
    session = str(session or "unknown")[:120]
    return os.path.join(os.fspath(state), "inbox", CALLS,
                        f"{_marker_name(session, '')[:16]}.{_marker_name(session, str(call_id)[:200])}")


def _call_marker(state_dir, session: str, call_id: str, request_id: str) -> str | None:
    """``inbox/calls/<session hash>.<call hash>`` holding the request id while the hook waits:
    if the hook is killed (the agent's timeout, the user's Esc), the call's or the session's
    next event finds it with one stat and ends the request."""
    if not call_id:
        return None
    from core.api import atomic_write

    path = marker_path(state_dir, session, call_id)
    try:
        atomic_write(path, request_id)
    except OSError:
        return None
    return path


def _drop_marker(path: str | None) -> None:
    if path:
        try:
            os.unlink(path)
        except OSError:
            pass


def _end_marked(state: str, paths: list[str], why: str, say: Callable[[str], None]) -> int:
    """End (withdraw) the requests these markers name; how many were still open."""
    if not paths:
        return 0
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    from core.api import ARS, UnknownRequest, load_settings

    ended = 0
    with ARS(load_settings(state_dir=state), create=False) as ars:
        for path in paths:
            try:
                with open(path, encoding="utf-8") as fh:
                    request_id = fh.read().strip()
                ended += bool(ars.inbox_withdraw(request_id, why))
            except UnknownRequest:
                pass  # the hook was killed after its marker and before its request: nothing to end
            except Exception as exc:  # noqa: BLE001 - one stale marker never stops the rest
                say(f"could not end the request of {os.path.basename(path)}: {exc}")
            _drop_marker(path)
    return ended


def end_call(state: str, session: str, call_id: str, why: str, say: Callable[[str], None] = _quiet) -> int:
    """The call is over (it ran, or the agent answered it elsewhere): withdraw its request if
    one is still open. One stat when there is none (every tool call runs this)."""
    if not call_id:
        return 0
    path = marker_path(state, session, call_id)
    if not os.path.exists(path):
        return 0
    return _end_marked(state, [path], why, say)


def end_session(state: str, session: str, why: str, say: Callable[[str], None] = _quiet) -> int:
    """The session stopped or ended: withdraw every request of it still open."""
    session = str(session or "unknown")[:120]
    folder = os.path.join(state, "inbox", CALLS)
    prefix = _marker_name(session, "")[:16] + "."
    try:
        names = [n for n in os.listdir(folder) if n.startswith(prefix)]
    except OSError:
        names = []
    return _end_marked(state, [os.path.join(folder, n) for n in names], why, say)


# -- what the request shows ---------------------------------------------------------------
def detail_of(tool_name: str, tool_input: dict, limit: int) -> tuple[str, str | None]:
    """Exactly what will run (the Bash command itself; other tools' input as
    JSON), and the full text when it had to be cut to ``limit``."""
    command = tool_input.get("command")
    if tool_name == "Bash" and isinstance(command, str):
        text = command
    else:
        text = json.dumps(tool_input, ensure_ascii=False, indent=2, default=str)
    if len(text) <= limit:
        return text, None
    tail = f"\n[... {len(text):,} characters in all; the whole input is in the state directory's hooks/held/]"
    return text[: limit - len(tail)] + tail, text


def _keep_full_input(state_dir, request_id: str, tool_input: dict, full: str, say: Callable[[str], None]) -> None:
    from core.api import atomic_write

    try:
        atomic_write(os.path.join(os.fspath(state_dir), "hooks", "held", f"{request_id}.json"),
                     json.dumps(tool_input, ensure_ascii=False, default=str))
    except OSError as exc:
        say(f"could not keep the whole tool input of {request_id}: {exc}")


def _first_line(text: str, width: int = 160) -> str:
    line = " ".join(text.strip().splitlines()[0].split()) if text.strip() else ""
    return line if len(line) <= width else line[: width - 1] + "…"
