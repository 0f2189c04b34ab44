"""One inbox for every request for a person: a loop's waiting step or blocker,
an MCP client's ``request_approval``, a Claude Code tool call held by the gate.
Each request is decided exactly once (see ``core.once``); the loser of a race
is told who decided what and when. Front ends reach it through ``core.api.ARS``
(``inbox_list``, ``inbox_get``, ``inbox_decide``, ``request_approval``)."""

from .models import InboxDecision, InboxRequest
from .store import (MAX_DETAIL, MAX_META, MAX_SUMMARY, AlreadyDecided, CorruptRequest, Inbox, UnknownRequest)

__all__ = ["AlreadyDecided", "CorruptRequest", "Inbox", "InboxDecision", "InboxRequest", "MAX_DETAIL", "MAX_META",
           "MAX_SUMMARY", "UnknownRequest"]
