"""Loops (1): every loop in a table keyed by loop id, and the selected loop's
state in a detail pane. Rows are updated cell by cell, only for loops whose
version moved in the store; ages tick every few seconds."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container
from textual.widgets import DataTable, Input, Static

from core.loop.models import LoopState

from ..modals import ConfirmModal, InputModal
from ..widgets.loop_detail import LoopDetail
from ..widgets.table import FlexTable
from ..widgets.status import age, one_line, status_text
from .base import DashboardView

STYLES = Path(__file__).resolve().parents[2] / "styles"
COLUMNS = (("loop", "loop", 17), ("status", "status", 15), ("step", "step", 7), ("iter", "it/max", 6),
           ("goal", "goal", None), ("age", "age", 4))
AGE_TICK = 15.0


class LoopsScreen(DashboardView):
    MODE = "loops"
    AUTO_FOCUS = "#loops-table"
    CSS_PATH = [STYLES / "loops.tcss"]
    BINDINGS = [
        Binding("R", "resume", "Resume", show=True),
        Binding("c", "cancel_loop", "Cancel loop", show=True),
        Binding("enter", "history", "History", show=True),
        Binding("escape", "clear_filter", "Clear filter", show=False),
    ]
    PALETTE = (
        ("Resume loop", "Run the selected loop to its next exit (R)", "resume"),
        ("Cancel loop", "Abort the selected loop, after a y/n (c)", "cancel_loop"),
        ("Loop history", "Open the selected loop in Checkpoints (enter)", "history"),
    )

    def __init__(self) -> None:
        super().__init__()
        self.seen: dict[str, int] = {}
        self.cells: dict[str, tuple] = {}
        self.filter = ""

    def compose(self) -> ComposeResult:
        yield from self.compose_header()
        yield Input(placeholder="/ filter loops: id, goal, status, step", id="loops-filter", compact=True)
        with Container(id="loops-body"):
            yield FlexTable(id="loops-table", cursor_type="row", zebra_stripes=True, enter_label="History", flex="goal")
            yield LoopDetail(id="loop-detail")
        yield Static("", id="loops-empty")
        yield from self.compose_footer()

    def on_mount(self) -> None:
        table = self.query_one("#loops-table", DataTable)
        for key, label, width in COLUMNS:
            table.add_column(label, key=key, width=width)
        table.focus()
        self.query_one(LoopDetail).show(None)
        self.set_interval(AGE_TICK, self.tick_ages)
        self.call_after_refresh(self.query_one("#loops-table", FlexTable).fit)
        super().on_mount()

    # -- drawing -------------------------------------------------------------------------
    def row(self, s: LoopState) -> tuple:
        goal = s.goal.name or s.goal_id
        if s.parent:
            goal = f"⑂ {goal}"
        return (s.loop_id, status_text(self.app, s.status), s.current_step,
                f"{s.iteration}/{s.budget.max_iterations}", one_line(goal, 80), age(s.updated_at))

    def matches(self, s: LoopState) -> bool:
        if not self.filter:
            return True
        hay = f"{s.loop_id} {s.goal_id} {s.goal.name} {s.status} {s.current_step}".casefold()
        return all(w in hay for w in self.filter.casefold().split())

    def sync(self, theme: bool = False) -> None:
        table = self.query_one("#loops-table", DataTable)
        store = self.store
        if theme:  # status colours come from the theme: redraw those cells
            for loop_id, cells in self.cells.items():
                s = store.states.get(loop_id)
                if s is not None:
                    cells = (cells[0], status_text(self.app, s.status), *cells[2:])
                    table.update_cell(loop_id, "status", cells[1])
                    self.cells[loop_id] = cells
        changed, gone = store.changed_since(self.seen)
        added = False
        for loop_id in gone:
            self.seen.pop(loop_id, None)
            if loop_id in self.cells:
                table.remove_row(loop_id)
                del self.cells[loop_id]
        for loop_id in changed:
            s = store.states[loop_id]
            self.seen[loop_id] = store.versions[loop_id]
            if not self.matches(s):
                if loop_id in self.cells:
                    table.remove_row(loop_id)
                    del self.cells[loop_id]
                continue
            new = self.row(s)
            old = self.cells.get(loop_id)
            if old is None:
                table.add_row(*new, key=loop_id)
                added = True
            else:
                for (key, _label, _w), before, after in zip(COLUMNS, old, new):
                    if before != after:
                        table.update_cell(loop_id, key, after)
            self.cells[loop_id] = new
        if added:
            order = {s.loop_id: i for i, s in enumerate(store.ordered())}
            table.sort("loop", key=lambda loop_id: order.get(loop_id, 1 << 30))
        self.empty_state()
        current = self.current()
        if current is None or current in changed or theme:
            self.show_detail()

    def empty_state(self) -> None:
        store = self.store
        empty = self.query_one("#loops-empty", Static)
        if not store.loaded:
            text = "Loading loops…"
        elif not store.states:
            text = ("[b]No loops yet.[/]\n\nStart one from a shell:\n"
                    "  ars loop run --goal-file samples/goals/release-notes.json\n"
                    "or try the whole dashboard with sample data:  ars demo")
        elif not self.cells:
            text = f"No loop matches the filter “{self.filter}” (escape clears it)."
        else:
            text = ""
        empty.update(text)
        empty.display = bool(text)
        self.query_one("#loops-body").display = not text or bool(self.cells)

    def tick_ages(self) -> None:
        table = self.query_one("#loops-table", DataTable)
        for loop_id, cells in self.cells.items():
            s = self.store.states.get(loop_id)
            if s is None:
                continue
            a = age(s.updated_at)
            if a != cells[5]:
                table.update_cell(loop_id, "age", a)
                self.cells[loop_id] = (*cells[:5], a)

    def current(self) -> str | None:
        table = self.query_one("#loops-table", DataTable)
        if not table.row_count:
            return None
        try:
            return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        except Exception:  # noqa: BLE001 - no cursor yet
            return None

    def show_detail(self) -> None:
        loop_id = self.current()
        s = self.store.states.get(loop_id) if loop_id else None
        running = (loop_id in self.app.running) if s is not None and s.status == "active" else None  # type: ignore[attr-defined]
        self.query_one(LoopDetail).show(s, running)

    @on(DataTable.RowHighlighted, "#loops-table")
    def _highlighted(self, _event: DataTable.RowHighlighted) -> None:
        self.soon("detail", self.show_detail)

    @on(DataTable.RowSelected, "#loops-table")
    def _selected(self, _event: DataTable.RowSelected) -> None:
        self.action_history()

    # -- filter ------------------------------------------------------------------------------
    def focus_search(self) -> None:
        self.query_one("#loops-filter", Input).focus()

    @on(Input.Changed, "#loops-filter")
    def _filter(self, event: Input.Changed) -> None:
        value = event.value.strip()
        self.soon("filter", lambda: self.apply_filter(value), delay=0.12)  # one rebuild per typing pause

    def apply_filter(self, value: str) -> None:
        if value == self.filter:
            return
        self.filter = value
        table = self.query_one("#loops-table", DataTable)
        table.clear()
        self.cells.clear()
        self.seen.clear()
        self.sync()

    @on(Input.Submitted, "#loops-filter")
    def _filter_done(self, _event: Input.Submitted) -> None:
        self.query_one("#loops-table", DataTable).focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#loops-filter", Input)
        if box.value:
            box.value = ""
            self.apply_filter("")
        self.query_one("#loops-table", DataTable).focus()

    # -- actions -----------------------------------------------------------------------------
    def selected_state(self) -> LoopState | None:
        loop_id = self.current()
        return self.store.states.get(loop_id) if loop_id else None

    def action_resume(self) -> None:
        s = self.selected_state()
        if s is None:
            return
        if s.status in ("done", "aborted"):
            self.notify(f"{s.loop_id} is {s.status}: fork it from an earlier entry in Checkpoints (4, f)",
                        severity="warning")
            return
        if s.status in ("waiting_human", "blocked"):
            self.notify(f"{s.loop_id} waits for a decision: answer it in the Inbox (2)", severity="warning")
            return
        self.app.resume(s.loop_id)  # type: ignore[attr-defined]
        self.notify(f"resuming {s.loop_id}…")

    def action_history(self) -> None:
        s = self.selected_state()
        if s is not None:
            self.app.show_loop_history(s.loop_id)  # type: ignore[attr-defined]

    @work(exclusive=True, group="loops-cancel")
    async def action_cancel_loop(self) -> None:
        s = self.selected_state()
        if s is None:
            return
        if s.status in ("done", "aborted"):
            self.notify(f"{s.loop_id} is already {s.status}", severity="warning")
            return
        reason = await self.app.push_screen_wait(
            InputModal(f"Cancel {s.loop_id}?", prompt=f"{s.goal_id}: {s.goal.goal}\nWhy (kept in the ledger)?",
                       value="cancelled from the dashboard"))
        if not reason:
            return
        if await self.app.push_screen_wait(ConfirmModal(f"Abort {s.loop_id}?", f"reason: {reason}")):
            self.app.cancel(s.loop_id, reason)  # type: ignore[attr-defined]
