"""What every view shares: the header, the footer, redraws when the store moves
(and when it comes back into view, or the theme changes), and a layout class
for narrow (80 columns) and wide (120+) terminals."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.events import Resize
from textual.screen import Screen
from textual.widgets import Footer, Input

from ..messages import StoreChanged
from ..widgets.header import ArsHeader

WIDE = 120  # columns from which detail panes sit beside their table
DETAIL_DELAY = 0.05  # seconds the cursor rests before a detail pane is redrawn


def still_cursors(screen: Screen) -> None:
    """Stop text cursors blinking when the app asks (snapshot tests)."""
    if not getattr(screen.app, "blink", True):
        for box in screen.query(Input):
            box.cursor_blink = False


class DashboardView(Screen):
    MODE = ""
    PALETTE: tuple[tuple[str, str, str], ...] = ()  # (command, help, action name) for the palette

    def compose_header(self) -> ComposeResult:
        yield ArsHeader(self.MODE)

    def compose_footer(self) -> ComposeResult:
        yield Footer(compact=True)

    def on_mount(self) -> None:
        still_cursors(self)
        self.app.register_view(self)  # type: ignore[attr-defined]
        self.watch(self.app, "theme", lambda _t: self.sync(theme=True), init=False)
        self.sync()

    def on_screen_resume(self) -> None:
        self.sync()

    def on_store_changed(self, _msg: StoreChanged) -> None:
        self.sync()

    def on_resize(self, event: Resize) -> None:
        self.set_class(event.size.width >= WIDE, "-wide")

    def sync(self, theme: bool = False) -> None:
        """Redraw what changed in the store since the last call."""

    def soon(self, name: str, callback, delay: float = DETAIL_DELAY) -> None:
        """Run ``callback`` once the cursor rests for ``delay`` seconds: held
        arrow keys move the cursor at once and draw the detail pane once."""
        timers = self.__dict__.setdefault("_soon", {})
        old = timers.get(name)
        if old is not None:
            old.stop()
        timers[name] = self.set_timer(delay, callback)

    @property
    def store(self):
        return self.app.store  # type: ignore[attr-defined]
