"""The header every view shares: the six views as tabs (with their keys), the
inbox count from any view, and where the dashboard looks (state dir, live)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.events import Click
from textual.widgets import Label

VIEWS: tuple[tuple[str, str, str], ...] = (
    ("1", "loops", "Loops"),
    ("2", "inbox", "Inbox"),
    ("3", "recall", "Recall"),
    ("4", "checkpoints", "Checkpoints"),
    ("5", "health", "Health"),
    ("6", "context", "Context"),
)
# At 80 columns the long titles give their room to the inbox count and the trust state.
SHORT = {"Checkpoints": "Chkpts", "Context": "Ctx"}


NARROW = 100  # columns under which the tabs close up and the right side says only whose decisions count


class Tab(Label):
    def __init__(self, key: str, mode: str, title: str, active: bool):
        super().__init__(f"[b]{key}[/] {title}", id=f"tab-{mode}", classes="tab" + (" -active" if active else ""))
        self.mode, self._key, self._title = mode, key, title

    def narrow(self, narrow: bool) -> None:
        self.update(f"[b]{self._key}[/] {SHORT.get(self._title, self._title) if narrow else self._title}")

    def on_click(self, event: Click) -> None:
        event.stop()
        self.app.switch_mode(self.mode)


class ArsHeader(Horizontal):
    """One line at the top of each view."""

    DEFAULT_CSS = """
    ArsHeader { dock: top; height: 1; }
    """

    def __init__(self, active: str):
        super().__init__(id="header")
        self.active = active

    def compose(self) -> ComposeResult:
        yield Label("ARS", id="brand")
        for key, mode, title in VIEWS:
            yield Tab(key, mode, title, mode == self.active)
        yield Label("", id="inbox-badge")
        yield Label("", id="where")
        yield Label("", id="trust")  # docked right: whose decisions count is never the part cut

    def on_mount(self) -> None:
        self.watch(self.app, "inbox_count", self._inbox, init=True)
        self.watch(self.app, "live_status", self._where, init=True)
        self.watch(self.app, "trust_status", self._where, init=True)

    shown = ""  # what this view's filter leaves shown ("2 of 5 waiting shown"), said beside the count

    def set_shown(self, text: str) -> None:
        if text != self.shown:
            self.shown = text
            self._inbox(getattr(self.app, "inbox_count", 0))

    def _inbox(self, count: int) -> None:
        import re

        badge = self.query_one("#inbox-badge", Label)
        text = f" {count} waiting " if count else ""
        shown = self.shown
        if self.has_class("-narrow"):
            # 80 columns leave ~13 here: what waits first (the view says what its filter leaves)
            shown = re.sub(r"^(\d+) of (\d+) [\w ]*?shown$", r"\1/\2 shown", shown)
            text = text or (f" {shown} " if shown else "")
        elif shown:
            text = f" {shown} " + (f"· {count} waiting " if count and "waiting" not in shown else "")
        badge.update(text)
        badge.set_class(bool(count), "-attention")
        badge.set_class(bool(text) and not count, "-shown")
        self.query_one("#tab-inbox", Tab).set_class(bool(count), "-attention")

    def _where(self, _: str = "") -> None:
        """What the dashboard shows (loops, live) and the state path, cut first when narrow; and,
        docked right and never cut, whose decisions count (unverified: how to set the key up;
        locked; signing as): at 80 columns in its short form."""
        from textual.markup import escape

        raw = getattr(self.app, "trust_status", "")
        trust = escape(raw)
        if raw.startswith("unverified"):
            trust = f"[b $text-warning]⚠ {trust}[/]"
        if self.has_class("-narrow"):
            # the check words whole (the passphrase prompt shows them: a prompt without them is
            # not ARS's), "✎" while the key signs rejections and answers without asking
            words = escape(raw.rpartition("check: ")[2]) if "check: " in raw else ""
            trust = ("[b $text-warning]⚠ unverified[/]" if raw.startswith("unverified") else
                     f"[b $text-warning]✎[/] {words}" if raw.startswith("signing") else words)
        what, sep, state = getattr(self.app, "live_status", "").rpartition(" · ")
        parts = [escape(what) if sep else "", escape(state)]
        self.query_one("#where", Label).update(" · ".join(p for p in parts if p))
        self.query_one("#trust", Label).update(trust)

    def on_resize(self, event) -> None:
        narrow = event.size.width < NARROW
        if narrow != self.has_class("-narrow"):
            self.set_class(narrow, "-narrow")
            for tab in self.query(Tab):
                tab.narrow(narrow)
            self._where()
            self._inbox(getattr(self.app, "inbox_count", 0))
