"""The dashboard app's requests and notices (mixed into ``ArsApp``): agents'
requests listed in a thread (pending, just expired, and the ended ones for the
Inbox's audit filter), a new request announced (a toast, the bell, a desktop
notification: ``widgets/notify_term.py``; ``n`` goes to it), the window title's
count, and every notice kept whole in the event log while the corner shows one
short line, never over a decision dialog."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from textual import work
from textual.notifications import SeverityLevel

from tui import event_journal
from tui.messages import AgentsChanged, EventLogged
from tui.modals import ConfirmModal, InputModal
from tui.widgets.event_log import Event
from tui.widgets.request_pane import is_open
from tui.widgets.textual_patches import drop_toast_holders
from tui.widgets.status import one_line

EXPIRED_SHOWN_S = 60.0  # a request whose agent gave up stays in the Inbox this long, marked expired
TOAST_CHARS = 52  # a notice in the corner is one line this long (styles/app.tcss); the event log keeps it whole


class AppNotices:
    """Mixed into ``ArsApp``."""

    _held: list[dict[str, Any]]

    @work(thread=True, exclusive=True, group="agents")
    def poll_agents(self) -> None:
        self._load_agents()

    def load_ended(self) -> None:
        """The decided requests for the Inbox's audit filter: the same listing, now."""
        self.poll_agents()

    def _load_agents(self) -> None:
        """Agents' requests (worker thread): the pending ones count in the header
        beside the loops', and a new one is announced like a waiting loop; one
        whose agent gave up shows a minute longer, marked expired."""
        from datetime import timedelta

        try:
            every = self.ars.inbox.list()
        except Exception:  # noqa: BLE001 - an unreadable inbox leaves the loops' requests
            return
        recent = datetime.now(timezone.utc) - timedelta(seconds=EXPIRED_SHOWN_S)
        pending = [r for r in every if r.status == "pending" or (r.status in ("expired", "withdrawn") and (
            (r.decision.decided_at if r.decision is not None else r.expires_at or r.created_at) > recent))]
        self.post_message(AgentsChanged(pending, [r for r in every if r.status != "pending"]))

    def on_agents_changed(self, msg: AgentsChanged) -> None:
        now = {r.id: r for r in msg.pending}
        ended = {r.id: r for r in msg.ended}
        if self._agents_seen and now == self.agent_requests and ended.keys() == self.ended_requests.keys():
            return
        fresh = [r for r in msg.pending if r.id not in self.agent_requests and is_open(r)]
        self.agent_requests = now
        self.ended_requests = ended
        self.tell_agent_endings([*msg.pending, *msg.ended])  # decided elsewhere, expired, withdrawn: told
        self._count()
        for r in fresh if self._agents_seen else []:
            self.announce(r.id, "Waiting for you (n)", f"{r.source}: {r.summary}", "warning")
        self._agents_seen = True
        self._broadcast()

    def _count(self) -> None:
        self.inbox_count = self.store.inbox_count + sum(1 for r in self.agent_requests.values() if is_open(r))

    def announce(self, key: str, title: str, text: str, severity: SeverityLevel) -> None:
        """A new request: a toast, the bell and a desktop notification; ``n`` goes to it."""
        self.announced = key
        self.notify(text[:200], title=title, severity=severity, timeout=8)
        self.term.announce(f"ARS: {title.removesuffix(' (n)')}", text)

    def watch_inbox_count(self, count: int) -> None:
        """The window title counts what waits (seen in a tab or a taskbar while looking elsewhere)."""
        self.term.set_title(f"ARS — {count} waiting" if count else "ARS")

    # -- notices: the event log, and none over a decision being read ----------------------------
    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        """Every notice goes into the event log (``l``) whole; the corner shows
        it cut to one short line, and not while a decision dialog is open (it
        would cover what the person is reading): held until the dialog closes."""
        text = str(message)
        event = Event(datetime.now(timezone.utc), severity, title, text)
        self.events.append(event)
        event_journal.append(self.ars.state_dir, event)  # the next run starts with it (tui/event_journal.py)
        for view in self._views:
            view.post_message(EventLogged())
        # one line: the title leads the text (a title line of its own, and a long text wrapped in the
        # toast's box, made it 3-5 lines tall over the Request pane and the dialogs)
        line = f"{title}: {text}" if title else text
        toast = dict(message=one_line(line, TOAST_CHARS), title="", severity=severity, timeout=timeout,
                     markup=markup)
        if isinstance(self.screen, (ConfirmModal, InputModal)):
            self._held.append(toast)
            return
        self._one_toast(toast)

    def _one_toast(self, toast: dict) -> None:
        super().notify(**toast)

    def _on_notify(self, event) -> None:
        """One toast at a time, the newest, on the line under the header (the filter box's): a stack
        of them covered the column header and the first rows; the event log keeps every one. Textual
        adds a notification when its message arrives (App._on_notify, Textual 8.2: the version
        tui/widgets/textual_patches.py checks), so the older ones are cleared there."""
        self._notifications.clear()
        drop_toast_holders(self)
        super()._on_notify(event)  # type: ignore[misc]

    def flush_held(self) -> None:
        held, self._held = self._held, []
        if held:  # the newest; the rest are in the event log
            self._one_toast(held[-1])

    def record_recall(self, latency_ms: float) -> None:
        """A recall's latency for the Health view's sparkline (the Recall view's searches, not its probes)."""
        import time

        self.recall_samples.append((time.monotonic(), latency_ms))

    def action_next_waiting(self) -> None:
        """``n``: the next request waiting for a person, from any view."""
        if not self.inbox_count:
            self.notify("nothing is waiting for you", timeout=3)
            return
        if self.current_mode != "inbox":
            self.next_first = True  # the Inbox takes it when it shows (mounted or resumed)
            self.switch_mode("inbox")
        else:
            self.screen.select_next()  # type: ignore[attr-defined]
