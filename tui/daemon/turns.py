"""The recall daemon's answers for an agent's turn: ``context`` and ``capture``.

A fresh-process hook (Claude Code's ``UserPromptSubmit``) and an agent that cannot import
ARS (Hermes' provider, in Hermes' own venv) ask a long-lived ARS over the daemon's socket
(one JSON line each way). The request's fields are checked here; the work is the facade's
(``ARS.context``, ``ARS.capture_turn``).
"""

from __future__ import annotations

from typing import Any, Callable

CONTEXT_FIELDS = ("session", "agent", "previous", "turn")


def _text(message: dict, key: str) -> str | None:
    value = message.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{key} must be a string")
    return value


def context_call(message: dict) -> Callable[[Any], dict]:
    """The ``{"op": "context", "prompt": ..., ...}`` request as a call on an open ARS,
    answering ``{"text", "memories", "latency_ms", "note"}``."""
    prompt = message["prompt"]
    if not isinstance(prompt, str):
        raise TypeError("prompt must be a string")
    fields = {key: _text(message, key) for key in CONTEXT_FIELDS}
    budget = message.get("budget")
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int)):
        raise TypeError("budget must be an integer")
    record = message.get("record", True)
    if not isinstance(record, bool):
        raise TypeError("record must be true or false")

    def call(ars) -> dict:
        got = ars.context(prompt, budget=budget, record=record, **fields)
        return got.model_dump(mode="json")

    return call


def capture_call(message: dict) -> Callable[[Any], dict]:
    """The ``{"op": "capture", "agent", "session", "turn": {...}}`` request as a call on an
    open ARS, answering ``{"ids": [...]}`` (``{"error"}`` when this ARS cannot capture)."""
    agent, session, turn = message["agent"], message["session"], message["turn"]
    if not isinstance(agent, str) or not isinstance(session, str) or not isinstance(turn, dict):
        raise TypeError("agent and session must be strings, turn an object")

    def call(ars) -> dict:
        capture = getattr(ars, "capture_turn", None)
        if capture is None:
            return {"error": "this ARS cannot capture turns (no ARS.capture_turn)"}
        try:
            return {"ids": list(capture(agent, session, turn))}
        except Exception as exc:  # noqa: BLE001 - said to the agent's side in one line
            return {"error": " ".join(str(exc).split())[:200] or type(exc).__name__}

    return call
