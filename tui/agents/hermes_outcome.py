"""A held Hermes call as memory: the supervisor's decision, then what ran.

After ``pre_tool_call`` held a call and it was decided (approved, rejected, or no
decision in time), ``remember_decision`` writes it into memory through core
(``ARS.inbox_remember``: what was asked, who decided what and when). An approved
call also leaves ``<state>/inbox/ran/<call marker>`` naming its request, so the
``post_tool_call`` of that one call finds it with one stat (every other call pays
nothing more) and ``record_outcome`` adds how it ended (``ARS.inbox_outcome``: the
exit status and the output's first lines, from Hermes' ``result``), rewriting the
same memory: "the supervisor approved `openclaw gateway restart` at 20:08; it ran,
exit 0: Gateway restarted".

Memory never changes a call's fate: a failure here is one line on stderr, and an
ARS without these core methods (older) records nothing.
"""

from __future__ import annotations

import json
import os
from typing import Callable

RAN = "ran"
MAX_HEAD = 1500  # characters of output handed to core (it keeps the first lines)


def ran_path(state: str, session: str, call_id: str) -> str:
    from tui.agents.held_call import marker_path

    return os.path.join(os.fspath(state), "inbox", RAN, os.path.basename(marker_path(state, session, call_id)))


def remember_decision(state: str, session: str, call_id: str, request_id: str | None, verdict: str,
                      pin: str | None, say: Callable[[str], None]) -> None:
    if not request_id:
        return
    try:
        from core.api import ARS, atomic_write, load_settings

        with ARS(load_settings(state_dir=state), create=False) as ars:
            fn = getattr(ars, "inbox_remember", None)
            if fn is None:
                return
            fn(request_id, session=session, call_id=call_id or None, pin=pin, wait=1.0)  # inside the watchdog's margin
        if verdict == "allow" and call_id:
            atomic_write(ran_path(state, session, call_id), request_id)
    except Exception as exc:  # noqa: BLE001 - memory never decides a call
        say(f"the decision on {request_id} is not in memory: {type(exc).__name__}: {exc}")


def record_outcome(state: str, event: dict, say: Callable[[str], None]) -> bool:
    """How an approved call ended, into its memory; False when this call was not one (one stat)."""
    extra = event.get("extra") if isinstance(event.get("extra"), dict) else {}
    call_id = str(extra.get("tool_call_id") or "")
    if not call_id:
        return False
    path = ran_path(state, str(event.get("session_id") or "unknown"), call_id)
    try:
        with open(path, encoding="utf-8") as fh:
            request_id = fh.read().strip()
    except OSError:
        return False
    status, head = outcome_of(extra.get("status"), extra.get("result"))
    try:
        from core.api import ARS, load_settings

        with ARS(load_settings(state_dir=state), create=False) as ars:
            fn = getattr(ars, "inbox_outcome", None)
            if fn is not None:
                fn(request_id, status, head, by=f"hermes:{event.get('session_id') or 'unknown'}")
    except Exception as exc:  # noqa: BLE001 - the call is over whatever memory does
        say(f"what {request_id} did is not in memory: {type(exc).__name__}: {exc}")
    try:
        os.unlink(path)
    except OSError:
        pass
    return True


def outcome_of(status: object, result: object) -> tuple[int | str, str]:
    """(exit code, or ok / error / not run; the output's head) of Hermes' ``post_tool_call``:
    ``status`` is "ok" | "error" | "blocked"; a terminal call's ``result`` is JSON with
    ``exit_code`` and ``output``, other tools' is their text."""
    text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)
    code: int | str = {"ok": "ok", "error": "error", "blocked": "not run"}.get(str(status), "ok")
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        exit_code = data.get("exit_code")
        if isinstance(exit_code, int) and not isinstance(exit_code, bool) and code != "not run":
            code = exit_code
        out = data.get("output")
        if isinstance(out, str):
            err = data.get("error")
            text = out + (f"\n{err}" if isinstance(err, str) and err else "")
    return code, text[:MAX_HEAD]
