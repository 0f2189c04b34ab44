"""One inbox for every request for a person: a loop's waiting step or blocker,
an MCP client's ``request_approval``, a Claude Code tool call held by the gate.
Each request is decided exactly once (see ``core.infra.once``); the loser of a race
is told who decided what and when. Front ends reach it through ``core.api.ARS``
(``inbox_list``, ``inbox_get``, ``inbox_decide``, ``request_approval``).

The names below are loaded on first use (PEP 562), so importing a submodule
(``core.inbox.gate``, on every Claude Code tool call) loads only the stdlib."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

_FROM = {"InboxDecision": "models", "InboxRequest": "models",
         "AlreadyDecided": "store", "CorruptRequest": "store", "NobodyWaiting": "store",
         "SignatureRequired": "store", "Inbox": "store", "UnknownRequest": "store",
         "MAX_DETAIL": "store", "MAX_META": "store", "MAX_SUMMARY": "store"}

__all__ = sorted(_FROM)

if TYPE_CHECKING:
    from core.inbox.models import InboxDecision, InboxRequest
    from core.inbox.store import (MAX_DETAIL, MAX_META, MAX_SUMMARY, AlreadyDecided, CorruptRequest, Inbox, NobodyWaiting,
                        SignatureRequired, UnknownRequest)


def __getattr__(name: str) -> Any:
    module = _FROM.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_FROM))
