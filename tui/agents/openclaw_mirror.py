"""A held OpenClaw call mirrored into OpenClaw's own approvals (the plugin's
``mirror.js``): the hold of tui/agents/held_call.py, plus two things.

* As soon as the request exists, one line ``{"held": ID, "title",
  "description", "risk"}`` goes to stdout: the plugin returns OpenClaw's
  ``requireApproval`` with that text, so the prompt in OpenClaw's channels names
  the ARS request.
* A line on stdin ``{"openclaw": "allow-once"|"deny"|"timeout"|"cancelled"}``
  means OpenClaw's approval was decided there (or ran out) first: the ARS
  request is withdrawn with "decided in OpenClaw (allow-once)", which ends the
  wait. What runs is then OpenClaw's own decision (its prompt is the agent's
  own "ask", as Claude Code's is: it never counts as the supervisor's signature).

An ARS decision that comes first ends the wait as usual; the plugin then
settles OpenClaw's pending approval the same way.
"""

from __future__ import annotations

import json
import os
import sys
import threading

from tui.agents import held_call


def _read_openclaw_decision(state: str, call: held_call.Call, say) -> None:
    """Wait (in a thread) for OpenClaw's decision on stdin; withdraw the ARS request on it."""
    try:
        line = sys.stdin.readline()
    except (OSError, ValueError):
        return
    if not line.strip():
        return  # stdin closed without a decision: the plugin went away; the hold's own wait ends it
    try:
        decision = str(json.loads(line).get("openclaw") or "unknown")[:40]
    except (ValueError, AttributeError):
        decision = "unreadable"
    held_call.end_call(state, call.session, call.call_id, f"decided in OpenClaw ({decision})", say)


def hold_mirrored(call: held_call.Call, matches: list, gate, state: str, pin: str | None, *, say, emit,
                  wait: float | None = None) -> held_call.Outcome:
    first = matches[0]
    announced = threading.Event()

    def say_and_announce(message: str) -> None:
        say(message)
        if announced.is_set() or "waiting up to" not in message:
            return
        try:  # the marker the hold just wrote names the request
            with open(held_call.marker_path(state, call.session, call.call_id), encoding="utf-8") as fh:
                request_id = fh.read().strip()
        except OSError:
            return
        announced.set()
        detail, _ = held_call.detail_of(call.tool_name, call.tool_input, 300)
        emit({"held": request_id, "risk": first.risk,
              "title": f"ARS: {call.tool_name} held ({first.rule})",
              "description": (f"{first.reason}. Waiting in the ARS inbox as {request_id} "
                              f"(ars inbox approve {request_id}). {detail}")[:512]})
        threading.Thread(target=_read_openclaw_decision, args=(state, call, say), daemon=True).start()

    if not call.call_id:
        call.call_id = "openclaw-" + os.urandom(8).hex()  # the marker (and so the mirror) needs one
    return held_call.hold(call, matches, gate, state, pin, wait=wait, say=say_and_announce)
