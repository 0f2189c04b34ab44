"""Inbox (2): every request waiting for a person (approvals, questions) and
every blocker. ``a`` approve, ``r`` reject (with a reason), ``e`` edit the
proposed action, ``enter`` respond; each asks y/n before the decision is
written. The loop then resumes (in this process, unless another runs it)."""

from __future__ import annotations

import json
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container, VerticalScroll
from textual.markup import escape
from textual.widgets import DataTable, Static

from core.loop.models import LoopState

from ..modals import ConfirmModal, InputModal, json_object
from ..widgets.table import FlexTable
from ..widgets.status import age, one_line, theme_style
from .base import DashboardView

STYLES = Path(__file__).resolve().parents[2] / "styles"
COLUMNS = (("loop", "loop", 17), ("kind", "kind", 9), ("goal", "goal", 22), ("asks", "asks", None),
           ("age", "age", 4))
KIND_LABEL = {"approval": "approve?", "question": "question", "unblock": "blocked"}


class InboxScreen(DashboardView):
    MODE = "inbox"
    AUTO_FOCUS = "#inbox-table"
    CSS_PATH = [STYLES / "inbox.tcss"]
    BINDINGS = [
        Binding("a", "approve", "Approve", show=True),
        Binding("r", "reject", "Reject", show=True),
        Binding("e", "edit", "Edit", show=True),
        Binding("enter", "respond", "Respond", show=True),
    ]
    PALETTE = (
        ("Approve", "Approve the selected request's proposed action (a)", "approve"),
        ("Reject", "Reject the selected request, with a reason (r)", "reject"),
        ("Edit and approve", "Change the proposed action's arguments, then approve (e)", "edit"),
        ("Respond", "Answer the selected question or unblock with guidance (enter)", "respond"),
    )

    def __init__(self) -> None:
        super().__init__()
        self.seen: dict[str, int] = {}
        self.cells: dict[str, tuple] = {}
        self.busy: dict[str, str] = {}  # loop id -> request id decided, until the loop moves on

    def compose(self) -> ComposeResult:
        yield from self.compose_header()
        with Container(id="inbox-body"):
            yield FlexTable(id="inbox-table", cursor_type="row", zebra_stripes=True, enter_label="Respond", flex="asks")
            with VerticalScroll(id="request"):
                yield Static("", id="request-body")
        yield Static("", id="inbox-empty")
        yield from self.compose_footer()

    def on_mount(self) -> None:
        table = self.query_one("#inbox-table", DataTable)
        for key, label, width in COLUMNS:
            table.add_column(label, key=key, width=width)
        table.focus()
        self.query_one("#request").border_title = "Request"
        self.call_after_refresh(self.query_one("#inbox-table", FlexTable).fit)
        super().on_mount()

    # -- drawing -------------------------------------------------------------------------
    def row(self, s: LoopState) -> tuple:
        p = s.pending_approval
        kind = KIND_LABEL.get(p.kind, p.kind) if p else s.status
        asks = p.prompt if p else (s.blockers[0] if s.blockers else s.exit_reason)
        if s.loop_id in self.busy:
            asks = "… decision sent, waiting for the loop"
        style = theme_style(self.app, "text-error" if s.status == "blocked" else "text-warning", bold=True)
        return (s.loop_id, Text(kind, style=style), one_line(s.goal_id, 40), one_line(asks, 160),
                age(p.created_at if p else s.updated_at))

    def sync(self, theme: bool = False) -> None:
        table = self.query_one("#inbox-table", FlexTable)
        store = self.store
        if theme:
            self.seen = {k: v for k, v in self.seen.items() if k not in self.cells}
        changed, gone = store.changed_since(self.seen)
        for loop_id in gone:
            self.seen.pop(loop_id, None)
            self._drop(table, loop_id)
        for loop_id in changed:
            s = store.states[loop_id]
            self.seen[loop_id] = store.versions[loop_id]
            sent = self.busy.get(loop_id)
            if sent is not None and (s.pending_approval is None or s.pending_approval.request_id != sent
                                     or s.status not in ("waiting_human", "blocked")):
                del self.busy[loop_id]
            if s.status not in ("waiting_human", "blocked"):
                self._drop(table, loop_id)
                continue
            new = self.row(s)
            old = self.cells.get(loop_id)
            if old is None:
                table.add_row(*new, key=loop_id)
            else:
                for (key, _l, _w), before, after in zip(COLUMNS, old, new):
                    if before != after or (theme and key == "kind"):
                        table.update_cell(loop_id, key, after)
            self.cells[loop_id] = new
        if changed or gone:
            table.filled()
        empty = self.query_one("#inbox-empty", Static)
        if not store.loaded:
            text = "Loading…"
        elif not self.cells:
            text = ("[b]Nothing is waiting for you.[/]\n\nLoops that need an approval, an answer or "
                    "help past a blocker show up here, and the header counts them from every view.")
        else:
            text = ""
        empty.update(text)
        empty.display = bool(text)
        self.query_one("#inbox-body").display = not text
        self.show_request()

    def _drop(self, table: DataTable, loop_id: str) -> None:
        if loop_id in self.cells:
            table.remove_row(loop_id)
            del self.cells[loop_id]

    def current(self) -> LoopState | None:
        table = self.query_one("#inbox-table", DataTable)
        if not table.row_count:
            return None
        try:
            loop_id = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        except Exception:  # noqa: BLE001
            return None
        return self.store.states.get(loop_id)

    def show_request(self) -> None:
        body = self.query_one("#request-body", Static)
        s = self.current()
        if s is None:
            body.update("")
            return
        p = s.pending_approval
        out = [f"[b]{escape(s.goal.name or s.goal_id)}[/]  [dim]{escape(s.loop_id)} · iteration "
               f"{s.iteration}/{s.budget.max_iterations} · step {s.current_step}[/]",
               f"[dim]goal:[/] {escape(one_line(s.goal.goal, 300))}", ""]
        if p is not None:
            head = {"approval": "[b $warning]Approval needed[/]", "question": "[b $warning]Question[/]",
                    "unblock": "[b $error]Blocked[/]"}[p.kind]
            out.append(f"{head} [dim]{escape(p.request_id)} · asked {age(p.created_at)} ago[/]")
            out.append(escape(p.prompt))
            if p.action is not None:
                out.append("")
                out.append(f"[b]proposed:[/] {escape(p.action.tool)} — {escape(p.action.description)}")
                out.append(f"[b]args:[/] {escape(json.dumps(p.action.args, ensure_ascii=False))}")
                if p.action.rationale:
                    out.append(f"[dim]why: {escape(one_line(p.action.rationale, 240))}[/]")
            if p.risk:
                out.append(f"[$text-warning]risk: {escape(p.risk)}[/]")
            keys = {"approve": "[b]a[/] approve", "reject": "[b]r[/] reject (reason)",
                    "edit": "[b]e[/] edit args", "respond": "[b]enter[/] respond"}
            out.append("")
            out.append("keys: " + " · ".join(keys[k] for k in p.allowed))
        if s.blockers:
            out.append("")
            out.append("[b $error]blockers[/]")
            out.extend(f"  ■ {escape(one_line(b, 200))}" for b in s.blockers)
        if s.loop_id in self.busy:
            out.append("")
            out.append("[$text-primary]decision sent; the loop is resuming…[/]")
        body.update("\n".join(out))

    def decision_failed(self, loop_id: str) -> None:
        """The app could not record our decision: the row is live again."""
        if self.busy.pop(loop_id, None) is not None:
            self.seen.pop(loop_id, None)
            self.sync()

    @on(DataTable.RowHighlighted, "#inbox-table")
    def _highlighted(self, _event: DataTable.RowHighlighted) -> None:
        self.soon("request", self.show_request)

    @on(DataTable.RowSelected, "#inbox-table")
    def _selected(self, _event: DataTable.RowSelected) -> None:
        self.action_respond()

    # -- decisions -----------------------------------------------------------------------------
    def _target(self, kind: str) -> LoopState | None:
        s = self.current()
        if s is None:
            self.notify("nothing selected: the inbox is empty", severity="warning")
            return None
        p = s.pending_approval
        if p is None:
            self.notify(f"{s.loop_id} has no open request", severity="warning")
            return None
        if s.loop_id in self.busy:
            self.notify(f"a decision on {s.loop_id} is already on its way", severity="warning")
            return None
        if kind not in p.allowed:
            what = {"approval": "an approval request", "question": "a question", "unblock": "a blocked loop"}[p.kind]
            keys = {"approve": "a", "reject": "r", "edit": "e", "respond": "enter"}
            self.notify(f"cannot {kind} {what}: use " + " or ".join(f"{keys[k]} ({k})" for k in p.allowed),
                        severity="warning")
            return None
        return s

    async def _confirm_and_send(self, s: LoopState, kind: str, title: str, body: str, note: str = "",
                                args: dict | None = None) -> None:
        ok = await self.app.push_screen_wait(ConfirmModal(title, body))
        if not ok:
            self.notify("nothing written")
            return
        p = s.pending_approval
        assert p is not None
        self.busy[s.loop_id] = p.request_id
        self.seen.pop(s.loop_id, None)  # redraw its row as "sent"
        self.sync()
        self.app.decide(s.loop_id, kind, p.request_id, note=note, args=args)  # type: ignore[attr-defined]

    @work(exclusive=True, group="inbox-decision")
    async def action_approve(self) -> None:
        s = self._target("approve")
        if s is None:
            return
        a = s.pending_approval.action  # type: ignore[union-attr]
        what = f"{a.tool} {json.dumps(a.args, ensure_ascii=False)}" if a else s.pending_approval.prompt  # type: ignore[union-attr]
        await self._confirm_and_send(s, "approve", f"Approve on {s.loop_id}?",
                                     f"{s.goal_id}\nruns: {one_line(what, 300)}")

    @work(exclusive=True, group="inbox-decision")
    async def action_reject(self) -> None:
        s = self._target("reject")
        if s is None:
            return
        p = s.pending_approval
        assert p is not None
        reason = await self.app.push_screen_wait(
            InputModal(f"Reject {p.request_id} of {s.loop_id}", prompt=f"{one_line(p.prompt, 300)}\n\nWhy not? "
                       "(required; kept in the ledger)", placeholder="the reason"))
        if not reason:
            return
        await self._confirm_and_send(s, "reject", f"Reject on {s.loop_id}?", f"reason: {reason}", note=reason)

    @work(exclusive=True, group="inbox-decision")
    async def action_edit(self) -> None:
        s = self._target("edit")
        if s is None:
            return
        p = s.pending_approval
        assert p is not None and p.action is not None
        text = await self.app.push_screen_wait(
            InputModal(f"Edit {p.action.tool} for {s.loop_id}", prompt="The new arguments, as a JSON object; "
                       "the edited action is approved.", value=json.dumps(p.action.args, ensure_ascii=False),
                       validate=json_object))
        if not text:
            return
        args = json.loads(text)
        await self._confirm_and_send(s, "edit", f"Approve the edited {p.action.tool} on {s.loop_id}?",
                                     f"args: {json.dumps(p.action.args, ensure_ascii=False)}\n"
                                     f"  →   {json.dumps(args, ensure_ascii=False)}", args=args)

    @work(exclusive=True, group="inbox-decision")
    async def action_respond(self) -> None:
        s = self._target("respond")
        if s is None:
            return
        p = s.pending_approval
        assert p is not None
        label = "Unblock" if p.kind == "unblock" else "Answer"
        text = await self.app.push_screen_wait(
            InputModal(f"{label} {s.loop_id}", prompt=one_line(p.prompt, 400), placeholder="your answer"))
        if not text:
            return
        await self._confirm_and_send(s, "respond", f"Send this {label.lower()} to {s.loop_id}?", text, note=text)
