"""Inbox (2): every request waiting for a person, whoever asks: loops'
approvals, questions and blockers, MCP clients' requests, Claude Code tool
calls held by the gate. Most urgent first: an agent held on a deadline (its
hook gives up) comes first with a live countdown, then the rest oldest first;
a request whose waiter is gone shows as expired and takes no decision.

``a`` approve (with an optional note), ``r`` reject (with a reason), ``e``
edit a loop's proposed action, ``enter`` respond; each asks y/n before the
decision is written, and the footer shows only the keys the selected item
takes. ``n`` (from any view) selects the most urgent item (the one just
announced, when it is still waiting), then the next; ``d`` shows the decided
requests instead (the audit: outcome, who, when, the note); ``/`` filters;
``y`` copies the id. A loop then resumes (in this process, unless another
runs it); an agent waiting on its request goes ahead. Agents' requests go
through ``ARS.inbox_decide``: decided exactly once, whoever else decides.
"""

from __future__ import annotations

from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container, VerticalScroll
from textual.markup import escape
from textual.widgets import DataTable, Input, Static

from core.api import InboxRequest, LoopState

from tui.widgets.header import ArsHeader
from tui.widgets.request_pane import audit_markup, is_open, request_markup
from tui.widgets.table import KeyedTable
from tui.screens.base import DashboardView
from tui.screens.inbox_context import InboxContext
from tui.screens.inbox_decide import KEY_OF, InboxDecisions
from tui.screens.inbox_filter import InboxFilter
from tui.screens.inbox_rows import (COLUMNS, decided_order, decided_row, shorts, urgency, waiting_loop_request,
                         waiting_row, when_cell)

STYLES = Path(__file__).resolve().parents[2] / "styles"
NARROW_BELOW = 100  # terminal columns under which the source column is drawn narrower
COUNTDOWN_S = 1.0  # a deadline's countdown is redrawn this often (only while one shows)


class InboxScreen(InboxDecisions, InboxContext, InboxFilter, DashboardView):
    MODE = "inbox"
    DETAIL = "#request"
    AUTO_FOCUS = "#inbox-table"
    CSS_PATH = [STYLES / "inbox.tcss"]
    BINDINGS = [
        Binding("a", "approve", "Approve", show=True),
        Binding("r", "reject", "Reject", show=True),
        Binding("e", "edit", "Edit", show=True),
        Binding("enter", "respond", "Respond", show=True),
        Binding("d", "toggle_decided", "Decided", show=True),
        Binding("y", "copy", "Copy id", show=True),
        Binding("escape", "clear_filter", "Clear filter", show=False),
    ]
    PALETTE = (
        ("Approve", "Approve the selected request's proposed action, with an optional note (a)", "approve"),
        ("Reject", "Reject the selected request, with a reason (r)", "reject"),
        ("Edit and approve", "Change the proposed action's arguments, then approve (e)", "edit"),
        ("Respond", "Answer the selected question or unblock with guidance (enter)", "respond"),
        ("Decided requests", "Show the decided, expired and withdrawn requests: who, when, the note (d)",
         "toggle_decided"),
        ("Copy request id", "Put the selected request's id on the clipboard (y)", "copy"),
    )

    def __init__(self) -> None:
        super().__init__()
        self.seen: dict[str, int] = {}
        self.cells: dict[str, tuple] = {}
        self.items: dict[str, InboxRequest] = {}  # row key (loop id, or an agent's request id) -> the request
        self.busy: dict[str, str] = {}  # loop id -> request id decided, until the loop moves on (an agent's: its id)
        self.filter = ""
        self.selected: str | None = None
        self.decided = False  # the audit filter (d): decided, expired and withdrawn requests
        self.deciding: str | None = None  # the row key a decision dialog is open for
        self._order: list[str] = []
        self._n_at: str | None = None  # the row the last n selected (n again walks on from it)
        self.source_width = 18  # the source column's width: 11 under NARROW_BELOW columns

    def compose(self) -> ComposeResult:
        yield from self.compose_header()
        yield Input(placeholder="/ filter requests: source, what runs, what is asked", id="inbox-filter",
                    compact=True)
        with Container(id="inbox-body"):
            yield KeyedTable(id="inbox-table", cursor_type="row", zebra_stripes=True, enter_label="Respond",
                             flex="runs")
            with VerticalScroll(id="request"):
                yield Static("", id="request-body")
        yield Static("", id="inbox-empty")
        yield from self.compose_footer()

    def on_mount(self) -> None:
        table = self.table
        for key, label, width in COLUMNS:
            table.add_column(label, key=key, width=width)
        table.enter_allowed = lambda: "respond" in self.allowed()  # type: ignore[attr-defined]
        table.focus()
        self.query_one("#request").border_title = "Request"
        self.call_after_refresh(table.fit)
        super().on_mount()
        self.set_interval(COUNTDOWN_S, self.countdown)
        self._take_next()

    def on_screen_resume(self) -> None:
        super().on_screen_resume()
        self._take_next()

    def _take_next(self) -> None:
        if getattr(self.app, "next_first", False) and self.store.loaded:
            self.app.next_first = False  # type: ignore[attr-defined]
            self.select_next(first=True)

    @property
    def table(self) -> KeyedTable:
        return self.query_one("#inbox-table", KeyedTable)

    def on_resize(self, event) -> None:
        super().on_resize(event)
        # narrow: the source column gives room to "runs / asks" (what a person reads first)
        from textual.widgets.data_table import ColumnKey

        table = self.table
        width = 18 if event.size.width >= NARROW_BELOW else 11
        column = table.columns.get(ColumnKey("source"))
        if column is not None and column.width != width:
            column.width = width
            table._require_update_dimensions = True
            if width != self.source_width:
                self.source_width = width
                self.sync(theme=True)  # the sources abbreviated anew for the width
        table.fit()

    # -- drawing -------------------------------------------------------------------------
    def request_of(self, s: LoopState) -> InboxRequest | None:
        return waiting_loop_request(s)

    def row(self, key: str, r: InboxRequest, short: str) -> tuple:
        width = self.source_width
        if self.decided:
            return decided_row(self.app, r, short, width)
        return waiting_row(self.app, r, short, key in self.busy, width)

    def waiting(self) -> dict[str, InboxRequest]:
        """Every request waiting now (and agents' just expired), by row key (a loop's: its loop id)."""
        out: dict[str, InboxRequest] = {}
        for loop_id, s in self.store.states.items():
            r = self.request_of(s)
            if r is not None:
                out[loop_id] = r
        out.update(getattr(self.app, "agent_requests", {}))
        return out

    def decided_items(self) -> dict[str, InboxRequest]:
        """Every decided, expired or withdrawn request, agents' and loops', by request id: as it
        was asked (its audit record, built in a thread: tui/app_audit.py)."""
        return {rid: rec.request for rid, rec in getattr(self.app, "audits", {}).items()
                if rec.request.status != "pending"}

    def wanted(self) -> dict[str, InboxRequest]:
        return self.decided_items() if self.decided else self.waiting()

    def sync(self, theme: bool = False) -> None:
        table = self.table
        store = self.store
        keep = self.selected or table.cursor_key()
        if theme:
            self.cells.clear()
            table.clear()
        changed, gone = store.changed_since(self.seen)
        for loop_id in changed:
            self.seen[loop_id] = store.versions[loop_id]
            s = store.states[loop_id]
            sent = self.busy.get(loop_id)
            if sent is not None and (s.pending_approval is None or s.pending_approval.request_id != sent
                                     or s.status not in ("waiting_human", "blocked")):
                del self.busy[loop_id]
        for loop_id in gone:
            self.seen.pop(loop_id, None)
        if self.decided:
            self.app.load_audit()  # type: ignore[attr-defined]  (a thread; posts only what changed)
        everything = self.wanted()
        for key in [k for k in self.busy if k.startswith("req-")]:  # an agent's: until it shows decided
            if key not in everything or everything[key].decision is not None:
                del self.busy[key]
        items = {k: r for k, r in everything.items() if self.matches(r)}
        drop = [k for k in self.cells if k not in items]
        if drop:
            table.remove_rows(drop)
            for k in drop:
                self.cells.pop(k, None)
        short = shorts(items)
        fresh: list[tuple[str, tuple]] = []
        for key, r in items.items():
            new = self.row(key, r, short[key])
            old = self.cells.get(key)
            if old is None:
                fresh.append((key, new))
            else:
                for (col, _l, _w), before, after in zip(COLUMNS, old, new):
                    if before != after:
                        table.update_cell(key, col, after)
            self.cells[key] = new
        table.add_keyed_rows(fresh)
        self.items = items
        order = sorted(items, key=lambda k: (decided_order if self.decided else urgency)(k, items[k]))
        if fresh or drop or order != self._order:
            table.order_rows(order)
            table.filled()
        self._order = order
        self.count_shown(len(items), len(everything))
        self.empty_state()
        if keep is None or not table.go_to(keep):
            # the selected request is gone (decided here or elsewhere, withdrawn): the most urgent open one
            rest = self.open_order() if not self.decided else order
            if rest and table.go_to(rest[0]):
                self._n_at = rest[0]
            keep = table.cursor_key()
        self.selected = keep
        self.show_request()
        self.bindings_follow()
        if not self.decided:
            self.close_stale_dialog(everything)

    def retime(self) -> None:
        table = self.table
        for key, cells in self.cells.items():
            r = self.items.get(key)
            if r is None:
                continue
            new = self.row(key, r, cells[0])
            if new[5] != cells[5]:
                table.update_cell(key, "age", new[5])
                self.cells[key] = (*cells[:5], new[5])
        self.show_request()

    def countdown(self) -> None:
        """Each second while a deadline shows: its countdown cell only (a full sync walks every loop),
        and a full sync once a request's waiter just gave up (expired: no keys, sorted last)."""
        if self.decided or (self.app.screen is not self and self.deciding is None):
            return
        table = self.table
        lapsed = False
        for key, r in self.items.items():
            cells = self.cells.get(key)
            if r.expires_at is None or r.decision is not None or cells is None:
                continue
            new = when_cell(r)
            if new != cells[5]:
                table.update_cell(key, "age", new)
                self.cells[key] = (*cells[:5], new)
            lapsed = lapsed or (not is_open(r) and str(cells[2]) != "expired")
        if lapsed:
            self.sync()
        elif self.current_request() is not None and self.current_request().expires_at is not None:
            self.show_request()  # "its agent waits N s more"

    # -- the selection ---------------------------------------------------------------------
    def current_key(self) -> str | None:
        return self.selected if self.selected in self.cells else None

    def current(self) -> LoopState | None:
        key = self.current_key()
        if key is None or self.decided:
            return None
        return self.store.states.get(key)

    def current_agent(self) -> InboxRequest | None:
        key = self.current_key()
        return getattr(self.app, "agent_requests", {}).get(key) if key is not None and not self.decided else None

    def current_request(self) -> InboxRequest | None:
        key = self.current_key()
        return self.items.get(key) if key is not None else None

    def open_order(self) -> list[str]:
        """The open requests' row keys, most urgent first (a decision already sent: left out)."""
        return [k for k in self._order if k in self.items and k not in self.busy and is_open(self.items[k])]

    def select_next(self, first: bool = False) -> None:
        """``n``: the most urgent open request (the nearest deadline, then the higher risk, then the
        oldest); pressed again at once, the one after it in that order (wrapping). A cursor moved
        by hand, a decision or another view in between: the most urgent one again."""
        if self.decided:
            self.action_toggle_decided()
            first = True
        table = self.table
        keys = self.open_order()
        if not keys:
            self.notify("nothing is waiting for you", timeout=3)
            return
        self.app.announced = None  # type: ignore[attr-defined]
        current = self.current_key()
        walking = not first and current is not None and current == self._n_at and current in keys
        target = keys[(keys.index(current) + 1) % len(keys)] if walking else keys[0]
        self.select(target)
        self._n_at = target

    def select(self, key: str) -> None:
        table = self.table
        if table.go_to(key):
            self.selected = key
        table.focus()
        self.show_request()
        self.bindings_follow()

    def after_decision(self, key: str) -> None:
        """A decision on ``key`` was sent: select the most urgent request still open (focus stays
        on the list, so the next key acts on it)."""
        rest = [k for k in self.open_order() if k != key]
        if rest:
            self.select(rest[0])
        else:
            self.table.focus()
        self._n_at = rest[0] if rest else None  # as if n had selected it: n walks on from there

    def action_toggle_decided(self) -> None:
        """``d``: the decided requests (the audit) instead of the waiting ones, and back."""
        self.decided = not self.decided
        self.cells.clear()
        self._order = []
        self.selected = None
        self.table.clear()
        self.query_one("#request").border_title = "Decided request" if self.decided else "Request"
        if self.decided:
            self.app.load_ended()  # type: ignore[attr-defined]  (agents' ended requests, in a thread)
        self.sync()
        self.table.move_cursor(row=0, animate=False)

    # the filter box's events: @on handlers must be in the screen's own class to be registered
    @on(Input.Changed, "#inbox-filter")
    def _filter(self, event: Input.Changed) -> None:
        value = event.value.strip()
        self.soon("filter", lambda: self.apply_filter(value), delay=0.12)

    @on(Input.Submitted, "#inbox-filter")
    def _filter_done(self, _event: Input.Submitted) -> None:
        self.table.focus()

    @on(DataTable.RowHighlighted, "#inbox-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        # the row under the cursor now: a queued event may name a row that has since moved away
        key = self.table.cursor_key()
        if key in self.cells:
            self.selected = key
        self.bindings_follow()  # the footer shows the keys this item takes
        self.soon("request", self.show_request)

    @on(DataTable.RowSelected, "#inbox-table")
    def _selected(self, _event: DataTable.RowSelected) -> None:
        if "respond" in self.allowed():
            self.action_respond()

    def allowed(self) -> tuple[str, ...]:
        r = self.current_request()
        if r is None or self.decided or not is_open(r):
            return ()
        if r.source == "loop":
            s = self.current()
            return tuple(s.pending_approval.allowed) if s is not None and s.pending_approval else ()
        return r.allowed()

    def on_key(self, event) -> None:
        """A decision key the selected item does not take (hidden from the footer): say which keys it takes."""
        kind = {"a": "approve", "r": "reject", "e": "edit"}.get(event.key)
        if event.key == "enter" and self.focused is self.table and "respond" not in self.allowed():
            kind = "respond"
        if kind is None or self.focused is not self.table or kind in self.allowed():
            return
        r = self.current_request()
        if r is None:
            self.notify("nothing selected: the inbox is empty", severity="warning")
            return
        if self.decided or not is_open(r):
            state = r.status if r.decision is not None else "expired"
            self.notify(f"{r.id} is {state}: it cannot be decided any more", severity="warning")
            return
        what = {"approval": "an approval request", "question": "a question", "blocker": "a blocked loop"}[r.kind]
        self.notify(f"cannot {kind} {what}: use " + " or ".join(f"{KEY_OF[k]} ({k})" for k in self.allowed()),
                    severity="warning")

    def bindings_follow(self) -> None:
        """Redraw the footer when the keys the selected item takes changed (a
        footer redraw restyles every key: not on every cursor move)."""
        allowed = (self.allowed(), self.decided)
        if allowed != self.__dict__.get("_footer_for"):
            self.__dict__["_footer_for"] = allowed
            self.refresh_bindings()
            self.table.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in KEY_OF:
            return action in self.allowed()  # False: not in the footer, and the key does nothing here
        return True

    # -- the request pane ----------------------------------------------------------------------
    def show_request(self) -> None:
        body = self.query_one("#request-body", Static)
        r = self.current_request()
        if r is None:
            body.update("")
            return
        if self.decided or r.decision is not None:
            body.update(audit_markup(self.record_of(r)))
            return
        s = self.current() if r.source == "loop" else None
        text = request_markup(r, s, self.allowed(), s is not None and s.loop_id in self.busy)
        body.update(text + self.context_for(self.current_key() or "", r, s))

    def record_of(self, r: InboxRequest):
        """The request's audit record; until the thread has built it (tui/app_audit.py), what the
        request itself says (no signature check, no outcome yet)."""
        rec = getattr(self.app, "audits", {}).get(r.id)
        if rec is not None and rec.request.status == r.status:
            return rec
        from core.api import AuditRecord, audit_outcome

        self.app.load_audit()  # type: ignore[attr-defined]
        return AuditRecord(request=r, kind=r.kind, outcome=audit_outcome(r))

    def decision_failed(self, loop_id: str) -> None:
        """The app could not record our decision: the row is live again."""
        if self.busy.pop(loop_id, None) is not None:
            self.cells.pop(loop_id, None)
            self.table.remove_rows([loop_id])
            self.sync()
