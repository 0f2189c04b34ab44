"""A held call's decision and what then ran become memory, from any agent's hook.

* ``remember``: after ``held_call.hold`` (a decision, an expiry, or a request left to
  the agent's own prompt): ``ARS.inbox_remember`` writes the call's episode and links
  the call (session, call id) to its request.
* ``outcome``: from a post-tool hook, what ran and how it ended
  (``ARS.inbox_outcome``); the call's request is found by its link. A call no request
  was made for costs one failed open per id and loads nothing but the standard library.
* ``unsettled`` / ``remember_all``: the requests a session still had open before
  its Stop ended them, remembered once they are.

Memory never changes what the gate decided: every failure here is one line on
stderr (``say``), and the agent's call goes on as it was answered.
"""

from __future__ import annotations

import os
from typing import Callable, Iterable


def _ars(state: str):
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    from core.api import ARS, load_settings

    return ARS(load_settings(state_dir=state), create=False)


def remember(state: str, call, outcome, pin: str | None, say: Callable[[str], None]) -> None:
    """The decision on ``call`` (``held_call.Call``) as memory, linked to the call."""
    if not getattr(outcome, "request_id", None):
        return
    try:
        with _ars(state) as ars:
            ars.inbox_remember(outcome.request_id, session=str(call.session or "unknown")[:120],
                               call_id=str(call.call_id or "")[:200] or None, pin=pin)
    except Exception as exc:  # noqa: BLE001 - memory must never change the call's answer
        say(f"the decision on {outcome.request_id} is not in memory: {type(exc).__name__}: {exc}")


def linked(state: str, session: str, call_ids: Iterable[str]) -> str | None:
    """The request a call of ``session`` was held as (any of its ids), or None."""
    from core.hook_api import call_linked  # stdlib only: every tool call's hook asks

    session = str(session or "unknown")[:120]
    for call_id in call_ids:
        if call_id:
            found = call_linked(state, session, str(call_id)[:200])
            if found:
                return found
    return None


def outcome(state: str, request_id: str, status, output: str, by: str, say: Callable[[str], None],
            done: tuple[str, Iterable[str]] | None = None) -> str | None:
    """Record what the call of ``request_id`` did (``status``: an exit code or ok / error /
    not run) and rewrite its memory; the episode id, or None. ``done``: (session, call ids)
    whose links end here (the same input run again later is another call)."""
    try:
        with _ars(state) as ars:
            return ars.inbox_outcome(request_id, status, output, by=by)
    except Exception as exc:  # noqa: BLE001
        say(f"the outcome of {request_id} is not in memory: {type(exc).__name__}: {exc}")
        return None
    finally:
        if done is not None:
            from core.hook_api import call_unlink

            session, call_ids = done
            for call_id in call_ids:
                if call_id:
                    call_unlink(state, str(session or "unknown")[:120], str(call_id)[:200])


def unsettled(state: str, session: str) -> list[str]:
    """The requests linked to ``session``'s calls that nobody has decided yet (a stat each)."""
    from core.hook_api import call_session_links

    return [rid for rid in call_session_links(state, str(session or "unknown")[:120])
            if not os.path.exists(os.path.join(state, "inbox", f"{rid}.decision.json"))]


def remember_all(state: str, request_ids: list[str], say: Callable[[str], None]) -> None:
    """Write the memory of each request (now ended: the session stopped without running it)."""
    if not request_ids:
        return
    try:
        with _ars(state) as ars:
            for rid in request_ids:
                ars.inbox_remember(rid)
    except Exception as exc:  # noqa: BLE001
        say(f"the ended requests are not in memory: {type(exc).__name__}: {exc}")
