"""The audit's calls on the facade (``core.api.ARS`` takes them in): one request's record, every
request's, or the records of requests and loops a front end already holds (core/inbox/audit.py);
and how a request ends with nobody deciding it, told where new requests are told."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:
    from core.inbox.audit import AuditRecord
    from core.inbox.models import InboxRequest
    from core.loop.models import LoopState


class AuditMethods:
    supervisor_pin: str | None
    state_dir: Any
    inbox: Any
    loops: Any
    loop_show: Any
    loop_list: Any
    inbox_get: Any

    def _audit_pin(self) -> str | None:
        from core.inbox.signing import public_fingerprint

        return self.supervisor_pin or public_fingerprint(self.state_dir)

    def inbox_audit(self, request_id: str | None = None, *, status: str | None = None,
                    since: datetime | None = None) -> "AuditRecord | list[AuditRecord]":
        """One request's ``AuditRecord``, or (no id) every request's, newest first; signatures
        checked against the pinned key (else the state directory's)."""
        from core.inbox import audit

        if request_id is not None:
            return audit.record_of(self.inbox, lambda: self.loops.store, self.loop_show, self.inbox_get,
                                   request_id, self._audit_pin())
        return audit.every(self.inbox, self.loop_list, lambda: self.loops.store, self._audit_pin(), status, since)

    def inbox_audit_of(self, requests: "Iterable[InboxRequest]" = (), states: "Iterable[LoopState]" = (),
                       pin: str | None = None) -> "list[AuditRecord]":
        """The records of these agents' requests and these loops' decided ones (nothing listed again)."""
        from core.inbox import audit

        return audit.records_of(self.state_dir, self.loops.store, requests, states, pin or self._audit_pin())

    def inbox_end(self, request_id: str, how: str, why: str = "") -> bool:
        """End a request nobody waits for (``expire``/``withdraw``) once; False: already settled.
        An expiry is told where new requests are (core/inbox/notify.py): nothing ends silently."""
        ended = self.inbox.end(request_id, how, why)
        if ended and how == "expire":
            from core.inbox.notify import announce

            announce(self.state_dir, self.inbox.get(request_id), ended=True)
        return ended

    def inbox_withdraw(self, request_id: str, why: str = "") -> bool:
        """The waiter went away (a client disconnected, the call ran, the session stopped)."""
        return self.inbox.end(request_id, "withdraw", why)
