"""The Inbox's filter (``/``), what the header says it leaves shown, the empty
state, and copying the selected id (``y``)."""

from __future__ import annotations

from textual.markup import escape
from textual.widgets import Input, Static

from core.api import InboxRequest

from tui.widgets.header import ArsHeader


class InboxFilter:
    """Mixed into ``InboxScreen``."""

    def count_shown(self, shown: int, total: int) -> None:
        """The header says how many rows the filter leaves of how many (never all while it hides some)."""
        what = "decided" if self.decided else "waiting"
        text = f"{shown} of {total} {what} shown" if self.filter and shown != total else \
            f"{total} decided" if self.decided else ""
        for header in self.query(ArsHeader):
            header.set_shown(text)

    def empty_state(self) -> None:
        empty = self.query_one("#inbox-empty", Static)
        if not self.store.loaded:
            text = "Loading…"
        elif not self.cells and self.filter:
            text = f"No request matches the filter “{escape(self.filter)}” (escape clears it)."
        elif not self.cells and self.decided:
            text = "[b]No request was decided yet.[/]\n\nDecided, expired and withdrawn requests show here " \
                   "with who decided, when and the note. d goes back to the waiting ones."
        elif not self.cells:
            text = ("[b]Nothing is waiting for you.[/]\n\nLoops that need an approval, an answer or "
                    "help past a blocker show up here, and the header counts them from every view; so do "
                    "agents' requests (MCP clients, Claude Code's gate). n jumps here from any view; "
                    "d shows the decided ones.")
        else:
            text = ""
        empty.update(text)
        empty.display = bool(text)
        # filtered to nothing: the empty table keeps the focus (see LoopsScreen.empty_state)
        body = self.query_one("#inbox-body")
        was = body.display
        body.display = not text or bool(self.filter)
        if body.display and (not was or self.focused is None):
            self.table.focus()  # the list is back (a new request after the last decision): keys act on it

    # -- filter, copy ------------------------------------------------------------------------
    def focus_search(self) -> None:
        self.query_one("#inbox-filter", Input).focus()

    def apply_filter(self, value: str) -> None:
        if value != self.filter:
            self.filter = value
            self.sync()

    def action_clear_filter(self) -> None:
        box = self.query_one("#inbox-filter", Input)
        if box.value:
            box.value = ""
            self.apply_filter("")
        self.table.focus()

    def action_copy(self) -> None:
        r = self.current_request()
        self.copy_id(r.id if r is not None else None, "request id")
    def matches(self, r: InboxRequest) -> bool:
        if not self.filter:
            return True
        d = r.decision
        hay = (f"{r.id} {r.source} {r.kind} {r.risk} {r.summary} {r.detail} {r.meta.get('goal_id', '')} "
               f"{r.status} {d.decided_by + ' ' + d.note if d is not None else ''}").casefold()
        return all(w in hay for w in self.filter.casefold().split())

