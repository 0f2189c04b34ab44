"""One inbox for every request for a person: a loop's waiting step or blocker,
an MCP client's ``request_approval``, a Claude Code tool call held by the gate.
Each request is decided exactly once (see ``core.infra.once``); the loser of a race
is told who decided what and when. Front ends reach it through ``core.api.ARS``
(``inbox_list``, ``inbox_get``, ``inbox_decide``, ``request_approval``).

The names below are loaded on first use (PEP 562), so importing a submodule
(``core.inbox.gate``, on every Claude Code tool call) loads only the stdlib."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.infra.lazy_names import Table, each, module_getattr

_FROM: Table = {**each("core.inbox.models", "InboxDecision", "InboxRequest"),
                **each("core.inbox.store", "AlreadyDecided", "CorruptRequest", "NobodyWaiting", "SignatureRequired",
                       "Inbox", "UnknownRequest", "MAX_DETAIL", "MAX_META", "MAX_SUMMARY")}

__all__ = sorted(_FROM)

if TYPE_CHECKING:
    from core.inbox.models import InboxDecision, InboxRequest
    from core.inbox.store import (MAX_DETAIL, MAX_META, MAX_SUMMARY, AlreadyDecided, CorruptRequest, Inbox, NobodyWaiting,
                                  SignatureRequired, UnknownRequest)

__getattr__ = module_getattr(_FROM, globals(), __name__)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_FROM))
