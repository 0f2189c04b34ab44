"""Nothing ends silently (mixed into ``ArsApp``): a request that ends while the dashboard
runs, other than by this dashboard's own decision, is told: a short toast and a whole
line in the event log (``l``). Decided in the CLI, on the web page or in another
dashboard (who, what, the note), expired (its agent stopped waiting: nothing ran),
withdrawn (why). Agents' requests are seen in the inbox listing, loops' in the
loops that left ``waiting_human``/``blocked`` with a decision of their open request.
What had ended before the dashboard started is not news."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Iterable

from core.api import InboxRequest, LoopState, local_time

PAST = {"approve": "approved", "reject": "rejected", "respond": "answered", "edit": "edited and approved",
        "expire": "expired", "withdraw": "withdrawn"}


def ending_line(r: InboxRequest) -> tuple[str, str, str]:
    """(title, text, severity) of an agent's request that ended."""
    d = r.decision
    what = f"{r.id} from {r.source}: {' '.join(r.summary.split())[:120]}"
    if d is None or d.verdict == "expire":
        when = d.decided_at if d is not None else r.expires_at or r.created_at
        why = f" ({d.note})" if d is not None and d.note else ""
        return ("Expired", f"{what} — its agent stopped waiting at {local_time(when)}{why}; nothing ran",
                "warning")
    if d.verdict == "withdraw":
        return "Withdrawn", f"{what} — {d.note or 'the call went away'}", "information"
    note = f" — {d.note}" if d.note else ""
    return ("Decided elsewhere", f"{what} — {PAST[d.verdict]} by {d.decided_by or 'someone'} at "
            f"{local_time(d.decided_at)}{note}", "information")


class AppEndings:
    """Mixed into ``ArsApp``."""

    def endings_init(self) -> None:
        self._started = datetime.now(timezone.utc)
        self._decided_here: set[str] = set()  # request ids this dashboard decided (loops': loop:<loop>:<req>)
        self._told: set[str] = set()  # request ids whose ending was told

    def decided_here(self, request_id: str) -> None:
        """This dashboard is deciding ``request_id``: its own notice says so, not this one."""
        self._decided_here.add(request_id)

    def _ended_at(self, r: InboxRequest) -> datetime:
        d = r.decision
        return d.decided_at if d is not None else r.expires_at or r.created_at

    def tell_agent_endings(self, requests: Iterable[InboxRequest]) -> None:
        """Each ended agent's request not yet told (ended since the start, not decided here)."""
        for r in requests:
            if r.id in self._told or (r.decision is None and not r.expired()):
                continue
            self._told.add(r.id)
            if r.id in self._decided_here or self._ended_at(r) < self._started:
                continue
            title, text, severity = ending_line(r)
            self.notify(text, title=title, severity=severity, timeout=8)  # type: ignore[attr-defined]

    def tell_loop_endings(self, changes: Iterable[Any]) -> None:
        """A loop that left waiting_human/blocked with a decision on its open request made elsewhere."""
        for c in changes:
            if c.old not in ("waiting_human", "blocked") or c.new == c.old:
                continue
            s: LoopState = c.state
            mine = [d for d in s.decisions if d.loop_id == s.loop_id]
            if not mine:
                continue
            d = mine[-1]
            key = f"loop:{s.loop_id}:{d.request_id}"
            if key in self._told or key in self._decided_here or d.decided_at < self._started:
                continue
            self._told.add(key)
            note = f" — {d.note}" if d.note else ""
            self.notify(f"{s.goal_id} ({s.loop_id}) {d.request_id}: {PAST.get(d.kind, d.kind)} by "  # type: ignore[attr-defined]
                        f"{d.decided_by or 'someone'} at {local_time(d.decided_at)}{note} → {s.status}",
                        title="Decided elsewhere", severity="information", timeout=8)
