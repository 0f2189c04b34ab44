"""The dashboard's audit (mixed into ``ArsApp``): the record of every decided, expired or
withdrawn request, agents' and loops', for the Inbox's decided filter (``d``). Built in a
thread by ``ARS.inbox_audit_of`` from what the app already holds (the loops' states, the
agents' ended requests), one loop's records again only when that loop moved: a loop's
decided requests are read back from its history, as they were asked."""

from __future__ import annotations

from typing import Any

from textual import work

from tui.messages import AuditLoaded


class AppAudit:
    """Mixed into ``ArsApp``."""

    audits: dict[str, Any]

    def audit_init(self) -> None:
        self.audits = {}  # request id -> AuditRecord
        self._audit_loops: dict[str, tuple[Any, list]] = {}  # loop id -> (its version, its records)
        self._audit_agents: dict[str, tuple[Any, Any]] = {}  # request id -> (its decision, its record)
        self._audit_posted = False

    @work(thread=True, exclusive=True, group="audit")
    def load_audit(self) -> None:
        """Every ended request's record (worker thread); posted only when something changed."""
        store = self.store  # type: ignore[attr-defined]
        ended = dict(self.ended_requests)  # type: ignore[attr-defined]
        changed = False
        fresh_agents = [r for r in ended.values()
                        if self._audit_agents.get(r.id, (None,))[0] != (r.status, r.decision)]
        loops = {i: s for i, s in store.states.items() if s.decisions}
        fresh_loops = [s for i, s in loops.items() if self._audit_loops.get(i, (None,))[0] != store.versions.get(i)]
        try:
            records = self.ars.inbox_audit_of(fresh_agents, fresh_loops)  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001 - an unreadable history leaves the last records
            return
        for r in fresh_agents:
            rec = next((x for x in records if x.request.id == r.id), None)
            self._audit_agents[r.id] = ((r.status, r.decision), rec)
            changed = True
        for s in fresh_loops:
            prefix = f"loop:{s.loop_id}:"
            self._audit_loops[s.loop_id] = (store.versions.get(s.loop_id),
                                            [x for x in records if x.request.id.startswith(prefix)])
            changed = True
        for gone in set(self._audit_loops) - set(loops):
            del self._audit_loops[gone]
            changed = True
        for gone in set(self._audit_agents) - set(ended):
            del self._audit_agents[gone]
            changed = True
        if not changed and self._audit_posted:
            return
        self._audit_posted = True
        out: dict[str, Any] = {}
        for _v, recs in self._audit_loops.values():
            out.update((x.request.id, x) for x in recs)
        out.update((rid, rec) for rid, (_k, rec) in self._audit_agents.items() if rec is not None)
        self.post_message(AuditLoaded(out))  # type: ignore[attr-defined]

    def on_audit_loaded(self, msg: AuditLoaded) -> None:
        self.audits = msg.records
        self._broadcast()  # type: ignore[attr-defined]
