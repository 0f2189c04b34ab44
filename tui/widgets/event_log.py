"""The event log: every notification and decision, newest last, so a notice
that vanished from the corner can be read again (``l`` shows or hides the pane
in every view); it starts with earlier runs' (tui/event_journal.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from textual.containers import VerticalScroll
from textual.markup import escape
from textual.widgets import Static

from tui.widgets import status

SEVERITY_VAR = {"information": "$text-primary", "warning": "$text-warning", "error": "$text-error"}


@dataclass(frozen=True)
class Event:
    ts: datetime
    severity: str
    title: str
    message: str

    def line(self) -> str:
        local = self.ts.astimezone()
        # an earlier run's event (tui/event_journal.py) carries its day
        clock = "09:00:00" if status.STILL else \
            f"{local:%H:%M:%S}" if local.date() == datetime.now().astimezone().date() else f"{local:%m-%d %H:%M}"
        var = SEVERITY_VAR.get(self.severity, "$foreground")
        title = f"[b {var}]{escape(self.title)}[/] " if self.title else f"[{var}]·[/] "
        return f"[dim]{clock}[/] {title}{escape(status.one_line(self.message, 400))}"


class EventLog(VerticalScroll):
    """The pane: the last events, scrolled to the newest."""

    SHOWN = 200

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self._body = Static("", id="event-log-body")
        from core.api import local_zone

        self.border_title = f"Event log · times {'UTC' if status.STILL else local_zone()} · l hides"

    def compose(self):
        yield self._body

    def show_events(self, events) -> None:
        events = list(events)[-self.SHOWN:]
        self._body.update("\n".join(e.line() for e in events) if events else
                          "[dim]Nothing yet: notifications and decisions are kept here.[/]")
        self.scroll_end(animate=False)
