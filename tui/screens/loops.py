"""Loops (1): every loop in a table keyed by loop id, and the selected loop's
state in a detail pane.

The selection is a loop id, not a row position: when another process adds a
loop, the list re-sorts or the filter changes, the cursor stays on the same
loop, and Detail, ``c`` and ``R`` act on it. Rows are updated cell by cell,
only for loops whose version moved in the store; ages tick on a timer.
``s`` sorts by the next column (``S`` reverses), ``w`` shows only the loops
waiting for a person, ``/`` filters by text, ``y`` copies the loop id.
"""

from __future__ import annotations

from pathlib import Path

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container
from textual.widgets import DataTable, Input, Static

from core.api import LoopState

from tui.messages import SelectLoop
from tui.modals import ConfirmModal, InputModal
from tui.widgets.loop_detail import LoopDetail
from tui.widgets.header import ArsHeader
from tui.widgets.status import age, one_line, status_text, unique_prefixes
from tui.widgets.table import KeyedTable
from tui.screens.base import DashboardView
from tui.screens.loops_order import SORTS, matches, sort_key

STYLES = Path(__file__).resolve().parents[2] / "styles"
# (key, label, width); the loop column's width follows the ids' unique prefixes, goal takes the rest
COLUMNS = (("loop", "loop", 6), ("status", "status", 13), ("step", "step", 7), ("iter", "it/max", 6),
           ("goal", "goal", None), ("age", "age", 4))


class LoopsScreen(DashboardView):
    MODE = "loops"
    DETAIL = "#loop-detail"
    AUTO_FOCUS = "#loops-table"
    CSS_PATH = [STYLES / "loops.tcss"]
    BINDINGS = [
        Binding("R", "resume", "Resume", show=True),
        Binding("c", "cancel_loop", "Cancel", show=True),
        Binding("enter", "history", "History", show=True),
        Binding("w", "needs_you", "Waiting only", show=True),
        Binding("s", "sort", "Sort", show=True),
        Binding("S", "sort_reverse", "Reverse", show=False),
        Binding("y", "copy", "Copy id", show=True),
        Binding("escape", "clear_filter", "Clear filter", show=False),
    ]
    PALETTE = (
        ("Resume loop", "Run the selected loop to its next exit (R)", "resume"),
        ("Cancel loop", "Abort the selected loop: asks a reason, then y/n (c)", "cancel_loop"),
        ("Loop history", "Open the selected loop in Checkpoints (enter)", "history"),
        ("Only loops waiting for you", "Show only waiting/blocked loops, or all again (w)", "needs_you"),
        ("Sort loops", "Sort by the next column: updated, status, goal, loop, iteration (s)", "sort"),
        ("Copy loop id", "Put the selected loop's id on the clipboard (y)", "copy"),
    )

    def __init__(self) -> None:
        super().__init__()
        self.seen: dict[str, int] = {}
        self.cells: dict[str, tuple] = {}
        self.filter = ""
        self.needs_you = False
        self.sort_by = 0  # index into SORTS
        self.reverse = True  # updated: newest first
        self.selected: str | None = None  # the loop the person selected (the cursor follows it)
        self.want: str | None = None  # a loop to select once its row shows up (a fork)
        self.prefixes: dict[str, str] = {}
        self._built: dict[str, tuple[int, tuple]] = {}  # each loop's row as last built, and the store version
        self._keys: dict[str, object] = {}  # each shown loop's sort key (sync and _resort keep them current)
        self.shown: str | None = None  # the loop Detail shows

    def compose(self) -> ComposeResult:
        yield from self.compose_header()
        yield Input(placeholder="/ filter loops: id, goal, status, step", id="loops-filter", compact=True)
        yield Static("", id="loops-mode")
        with Container(id="loops-body"):
            yield KeyedTable(id="loops-table", cursor_type="row", zebra_stripes=True, enter_label="History",
                             flex="goal")
            yield LoopDetail(id="loop-detail")
        yield Static("", id="loops-empty")
        yield from self.compose_footer()

    def on_mount(self) -> None:
        table = self.table
        for key, label, width in COLUMNS:
            table.add_column(label, key=key, width=width)
        table.focus()
        self.query_one(LoopDetail).show(None)
        self.call_after_refresh(table.fit)
        super().on_mount()
        self.mode_line()

    @property
    def table(self) -> KeyedTable:
        return self.query_one("#loops-table", KeyedTable)

    # -- drawing -------------------------------------------------------------------------
    def row(self, s: LoopState) -> tuple:
        goal = s.goal.name or s.goal_id
        if s.parent:
            goal = f"⑂ {goal}"
        label = "waiting" if s.status == "waiting_human" else None
        status = s.status
        if status == "active" and s.loop_id not in self.app.running:  # type: ignore[attr-defined]
            status = label = "paused"  # "● active" claimed a loop nobody runs
        return (self.prefixes.get(s.loop_id, s.loop_id), status_text(self.app, status, label), s.current_step,
                f"{s.iteration}/{s.budget.max_iterations}", one_line(goal, 200), age(s.updated_at))

    def matches(self, s: LoopState) -> bool:
        return matches(s, self.filter, self.needs_you)

    def sync(self, theme: bool = False) -> None:
        table = self.table
        store = self.store
        keep = self.selected or table.cursor_key()
        built = self._built
        if theme:  # status colours come from the theme: redraw every row's cells
            self.seen.clear()
            built.clear()
        changed, gone = store.changed_since(self.seen)
        for loop_id in gone:
            self.seen.pop(loop_id, None)
            built.pop(loop_id, None)
        drop = [i for i in gone if i in self.cells]
        if len(store.states) != len(self.prefixes) or any(i not in self.prefixes for i in changed):
            self._reprefix()
        reorder = bool(drop)
        key = sort_key(SORTS[self.sort_by][0])
        fresh: list[tuple[str, tuple]] = []  # rows to add, in one go (KeyedTable.add_keyed_rows)
        for loop_id in changed:
            s = store.states[loop_id]
            version = self.seen[loop_id] = store.versions[loop_id]
            if not self.matches(s):
                if loop_id in self.cells:
                    drop.append(loop_id)
                continue
            # a filter change matches every loop again: a row whose loop did not move is not rebuilt
            # (only its age is), so `w` off re-adds 1,000 rows without making 1,000 again
            was = built.get(loop_id)
            prefix = self.prefixes.get(loop_id, loop_id)
            if was is not None and was[0] == version and was[1][0] == prefix:
                new = (*was[1][:5], age(s.updated_at))
            else:
                new = self.row(s)
            built[loop_id] = (version, new)
            old = self.cells.get(loop_id)
            if old is None:
                fresh.append((loop_id, new))
                reorder = True
            else:
                for (col, _label, _w), before, after in zip(COLUMNS, old, new):
                    if before != after:
                        table.update_cell(loop_id, col, after)
                reorder = reorder or key(s) != self._keys.get(loop_id)
            self._keys[loop_id] = key(s)
            self.cells[loop_id] = new
        table.add_keyed_rows(fresh)
        if drop:
            table.remove_rows(drop)
            for loop_id in drop:
                self.cells.pop(loop_id, None)
                self._keys.pop(loop_id, None)
        if reorder:
            self.reorder()
        self.empty_state()
        hidden = self.filter or self.needs_you  # the header says what the filter leaves, not only the total
        shown = f"{len(self.cells)} of {len(store.states)} loops shown" if hidden else ""
        self.query_one(ArsHeader).set_shown(shown)
        line = (shown, len(store.states), store.loaded)
        if line != self.__dict__.get("_mode_for"):
            self.__dict__["_mode_for"] = line
            self.mode_line()  # the mode line says it too (at 80 columns the header gives it up first)
        self.follow(keep)
        if theme or self.selected in changed or self.shown != self.selected:
            self.show_detail()

    def _reprefix(self) -> None:
        """Loop ids cut to their unique prefix; when a new loop lengthens them, redraw the id cells."""
        prefixes = unique_prefixes(list(self.store.states))
        width = max((len(p) for p in prefixes.values()), default=6)
        table = self.table
        for loop_id, cells in self.cells.items():
            p = prefixes.get(loop_id, loop_id)
            if cells[0] != p:
                table.update_cell(loop_id, "loop", p)
                self.cells[loop_id] = (p, *cells[1:])
        self.prefixes = prefixes
        from textual.widgets.data_table import ColumnKey

        column = table.columns.get(ColumnKey("loop"))
        if column is not None and column.width != width:
            column.width = width
            table._require_update_dimensions = True
            table.fit()

    def reorder(self) -> None:
        keys = self._keys  # each shown loop's sort key, kept up to date by sync and _resort
        ids = sorted(self.cells, key=keys.__getitem__, reverse=self.reverse)
        self.table.order_rows(ids)

    def follow(self, loop_id: str | None) -> None:
        """Keep the cursor on ``loop_id`` (or on the loop we are told to select)."""
        table = self.table
        if self.want is not None and self.want in self.cells:
            loop_id, self.want = self.want, None
        if loop_id is not None and table.go_to(loop_id):
            self.selected = loop_id
        elif table.row_count:
            self.selected = table.cursor_key()
        else:
            self.selected = None

    def empty_state(self) -> None:
        store = self.store
        empty = self.query_one("#loops-empty", Static)
        state = getattr(self.app, "ars", None)
        where = f" --state {state.state_dir}" if state is not None else ""
        if not store.loaded:
            text = "Loading loops…"
        elif not store.states:
            text = ("[b]No loops yet.[/]\n\nStart one from a shell:\n"
                    f"  ars loop run{where} --goal-file samples/goals/release-notes.json\n"
                    f"or try the whole dashboard with sample data:  ars demo{where}")
        elif not self.cells:
            what = " and ".join(x for x in (f"the filter “{self.filter}”" if self.filter else "",
                                            "waiting/blocked" if self.needs_you else "") if x)
            text = f"No loop matches {what} (escape clears the filter, w shows every status)."
        else:
            text = ""
        empty.update(text)
        empty.display = bool(text)
        # a filter that matches nothing keeps the (empty) table and its focus: hiding it would move the
        # focus into the filter box, and the next key (w, a view number) would be typed there
        self.query_one("#loops-body").display = bool(store.states) or not text

    def mode_line(self) -> None:
        name = SORTS[self.sort_by][0]
        order = {"updated": ("newest first", "oldest first"), "status": ("done first", "waiting first"),
                 "iteration": ("most first", "fewest first")}.get(name, ("Z→A", "A→Z"))
        parts = [f"sorted by [b]{name}[/] ({order[0] if self.reverse else order[1]}) · s next · S reverse"]
        if self.needs_you:
            parts.append("[b $text-warning]only waiting/blocked[/] · w all")
        shown, total, loaded = self.__dict__.get("_mode_for", ("", len(self.store.states), self.store.loaded))
        # how many loops (the header's "N loops · live" is the first thing an 80-column header gives up)
        parts.insert(0, f"[b]{shown}[/]" if shown else f"{total} loops" + ("" if loaded else " · loading…"))
        self.query_one("#loops-mode", Static).update("[dim]" + "   ".join(parts) + "[/]")

    def retime(self) -> None:
        table = self.table
        for loop_id, cells in self.cells.items():
            s = self.store.states.get(loop_id)
            if s is None:
                continue
            a = age(s.updated_at)
            if a != cells[5]:
                table.update_cell(loop_id, "age", a)
                self.cells[loop_id] = (*cells[:5], a)
        self.show_detail()

    def current(self) -> str | None:
        return self.selected

    def show_detail(self) -> None:
        loop_id = self.selected
        s = self.store.states.get(loop_id) if loop_id else None
        running = (loop_id in self.app.running) if s is not None and s.status == "active" else None  # type: ignore[attr-defined]
        self.query_one(LoopDetail).show(s, running)
        self.shown = loop_id if s is not None else None

    @on(DataTable.RowHighlighted, "#loops-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        # the row under the cursor now: a queued event may name a row that has since moved away
        key = self.table.cursor_key()
        if key is not None and key in self.cells:
            self.selected = key
        self.soon("detail", self.show_detail)

    @on(DataTable.RowSelected, "#loops-table")
    def _selected(self, _event: DataTable.RowSelected) -> None:
        self.action_history()

    @on(DataTable.HeaderSelected, "#loops-table")
    def _header(self, event: DataTable.HeaderSelected) -> None:
        col = event.column_key.value
        for i, (_name, column) in enumerate(SORTS):
            if column == col:
                if i == self.sort_by:
                    self.reverse = not self.reverse
                else:
                    self.sort_by, self.reverse = i, i in (0, 4)
                self._resort()
                return

    def on_select_loop(self, msg: SelectLoop) -> None:
        self.want = msg.loop_id
        self.follow(self.selected)
        self.show_detail()

    # -- filter, sort ------------------------------------------------------------------------
    def focus_search(self) -> None:
        self.query_one("#loops-filter", Input).focus()

    @on(Input.Changed, "#loops-filter")
    def _filter(self, event: Input.Changed) -> None:
        value = event.value.strip()
        self.soon("filter", lambda: self.apply_filter(value), delay=0.12)  # one redraw per typing pause

    def apply_filter(self, value: str | None = None) -> None:
        if value is not None:
            if value == self.filter:
                return
            self.filter = value
        self.seen.clear()  # every loop is matched again; rows that stay are left as they are
        self.sync()
        self.mode_line()

    @on(Input.Submitted, "#loops-filter")
    def _filter_done(self, _event: Input.Submitted) -> None:
        self.table.focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#loops-filter", Input)
        if box.value:
            box.value = ""
            self.apply_filter("")
        self.table.focus()

    def action_needs_you(self) -> None:
        self.needs_you = not self.needs_you
        self.apply_filter()

    def action_sort(self) -> None:
        self.sort_by = (self.sort_by + 1) % len(SORTS)
        self.reverse = SORTS[self.sort_by][0] in ("updated", "iteration")
        self._resort()

    def action_sort_reverse(self) -> None:
        self.reverse = not self.reverse
        self._resort()

    def _resort(self) -> None:
        key = sort_key(SORTS[self.sort_by][0])
        for loop_id in self.cells:
            self._keys[loop_id] = key(self.store.states[loop_id])
        keep = self.selected
        self.reorder()
        self.follow(keep)
        self.mode_line()

    # -- actions -----------------------------------------------------------------------------
    def selected_state(self) -> LoopState | None:
        return self.store.states.get(self.selected) if self.selected else None

    def action_copy(self) -> None:
        self.copy_id(self.selected)

    def action_resume(self) -> None:
        s = self.selected_state()
        if s is None:
            return
        if s.status in ("done", "aborted"):
            self.notify(f"{s.loop_id} is {s.status}: fork it from an earlier entry in Checkpoints (4, f)",
                        severity="warning")
            return
        if s.status in ("waiting_human", "blocked"):
            self.notify(f"{s.loop_id} waits for a decision: answer it in the Inbox (2, or n)", severity="warning")
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
