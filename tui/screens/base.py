"""What every view shares: the header, the event log pane and the footer,
redraws when the store moves (and when it comes back into view, or the theme
changes), relative times redrawn on a timer, and a layout class for narrow
(80 columns) and wide (120+) terminals."""

from __future__ import annotations

import time

from textual.app import ComposeResult
from textual.binding import Binding
from textual.events import Resize
from textual.screen import Screen
from textual.widgets import Input

from tui.messages import EventLogged, StoreChanged
from tui.widgets.event_log import EventLog
from tui.widgets.footer import ArsFooter
from tui.widgets.header import ArsHeader

WIDE = 120  # columns from which detail panes sit beside their table
XWIDE = 150  # columns from which a detail pane gets more of the width (the table has room to spare)
DETAIL_DELAY = 0.05  # seconds the cursor rests before a detail pane is redrawn
TICK_S = 5.0  # relative times ("42s", "updated 3m ago") are redrawn this often


def still_cursors(screen: Screen) -> None:
    """Stop text cursors blinking when the app asks (snapshot tests)."""
    if not getattr(screen.app, "blink", True):
        for box in screen.query(Input):
            box.cursor_blink = False


class DashboardView(Screen):
    MODE = ""
    PALETTE: tuple[tuple[str, str, str], ...] = ()  # (command, help, action name) for the palette
    # The view's detail pane (a css selector): J/K or shift+↓/↑ scroll it a few lines, shift+PgDn/PgUp a
    # page, while the list keeps the focus and ↑/↓ (at 80x24 a pane shows 8 lines: the blockers and the
    # score's components were reachable by the mouse wheel only)
    DETAIL = ""
    BINDINGS = [
        Binding("J,shift+down", "detail(3)", "Detail ↓", show=False),
        Binding("K,shift+up", "detail(-3)", "Detail ↑", show=False),
        Binding("shift+pagedown", "detail_page(1)", "Detail page ↓", show=False),
        Binding("shift+pageup", "detail_page(-1)", "Detail page ↑", show=False),
    ]

    def detail_pane(self):
        """The detail pane shown now (the first of ``DETAIL``'s matches on display), or None."""
        if not self.DETAIL:
            return None
        return next((w for w in self.query(self.DETAIL) if w.display), None)

    def action_detail(self, lines: int) -> None:
        pane = self.detail_pane()
        if pane is not None:
            pane.scroll_relative(y=lines, animate=False)

    def action_detail_page(self, pages: int) -> None:
        pane = self.detail_pane()
        if pane is not None:
            pane.scroll_relative(y=pages * max(1, pane.scrollable_content_region.height - 1), animate=False)

    def compose_header(self) -> ComposeResult:
        yield ArsHeader(self.MODE)

    def compose_footer(self) -> ComposeResult:
        yield EventLog(id="event-log")
        yield ArsFooter(compact=True)

    def on_mount(self) -> None:
        still_cursors(self)
        self.app.register_view(self)  # type: ignore[attr-defined]
        self.watch(self.app, "theme", lambda _t: self.sync(theme=True), init=False)
        self.watch(self.app, "log_open", self._log_open, init=True)
        self.set_interval(TICK_S, self._retime)
        self.sync()

    def on_screen_resume(self) -> None:
        self.sync()
        if time.monotonic() - self.__dict__.get("_retimed", 0.0) >= TICK_S:
            self._retime()  # back after a while: ages as of now (a quick switch keeps the last tick's)
        self.app.flush_held()  # type: ignore[attr-defined]  (notices held while a dialog was open)

    def on_store_changed(self, _msg: StoreChanged) -> None:
        self.sync()

    def on_event_logged(self, _msg: EventLogged) -> None:
        log = self.query_one("#event-log", EventLog)
        if log.display:
            log.show_events(self.app.events)  # type: ignore[attr-defined]

    def _log_open(self, open_: bool) -> None:
        log = self.query_one("#event-log", EventLog)
        log.display = open_
        if open_:
            log.show_events(self.app.events)  # type: ignore[attr-defined]

    def on_resize(self, event: Resize) -> None:
        self.set_class(event.size.width >= WIDE, "-wide")
        self.set_class(event.size.width >= XWIDE, "-xwide")

    def sync(self, theme: bool = False) -> None:
        """Redraw what changed in the store since the last call."""

    def _retime(self) -> None:
        if self.app.screen is not self:
            # a view out of sight redraws nothing: it catches up when it is shown (on_screen_resume).
            # Every view ticking in the background cost a full table repaint each tick, under the keys
            # a person presses in the view they are in.
            return
        self.__dict__["_retimed"] = time.monotonic()
        self.retime()

    def retime(self) -> None:
        """Redraw relative times (ages): called every ``TICK_S`` and on return to the view."""

    def soon(self, name: str, callback, delay: float = DETAIL_DELAY) -> None:
        """Run ``callback`` once the cursor rests for ``delay`` seconds: held
        arrow keys move the cursor at once and draw the detail pane once."""
        timers = self.__dict__.setdefault("_soon", {})
        old = timers.get(name)
        if old is not None:
            old.stop()
        timers[name] = self.set_timer(delay, callback)

    def cancel_soon(self, name: str) -> None:
        """Drop a ``soon`` callback that has not run yet."""
        old = self.__dict__.setdefault("_soon", {}).pop(name, None)
        if old is not None:
            old.stop()

    def copy_id(self, text: str | None, what: str = "loop id") -> None:
        """``y``: put an id on the clipboard (OSC 52: works over ssh and in tmux with set-clipboard)."""
        if not text:
            self.notify("nothing selected to copy", severity="warning")
            return
        self.app.copy_to_clipboard(text)
        self.notify(f"copied {what} {text}", timeout=3)

    @property
    def store(self):
        return self.app.store  # type: ignore[attr-defined]
