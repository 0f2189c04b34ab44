"""Checkpoints (4): goals → loops → history entries as a tree.

``[`` and ``]`` step through a loop's history (older / newer) with the diff
of what changed between consecutive entries; ``f`` forks a new loop from the
selected entry (its parent recorded, the original untouched); ``R`` resumes
the loop. A loop's history is read (in a thread) when its node is opened.
``/`` searches every loop's history (premises, outputs, reasons) and opens
the entry where the words came in; ``y`` copies the loop id. A new fork is
selected, so ``R`` resumes the fork. The Entry pane is redrawn whenever the
loop it shows moves, and its ages on a timer.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container, VerticalScroll
from textual.widgets import Static, Tree
from textual.widgets.tree import TreeNode

from core.api import TERMINAL, BadInput, HistoryEntry, LoopState

from tui.messages import SelectLoop
from tui.modals import HistorySearch
from tui.widgets.scrollbar_sync import SyncedTree
from tui.screens.base import DashboardView
from tui.screens.checkpoints_text import entry_label, entry_text, goal_label, goal_text, loop_label, loop_text

STYLES = Path(__file__).resolve().parents[2] / "styles"


class EntryBody(Static):
    """The Entry pane's text, redrawn only when it changes: a step shows its entry at once and
    again when the cursor rests (and the age timer redraws it), and each update lays the pane out."""

    shown: str | None = None

    def show(self, text: str) -> None:
        if text != self.shown:
            self.shown = text
            self.update(text)


class CheckpointsScreen(DashboardView):
    MODE = "checkpoints"
    DETAIL = "#entry-pane"
    AUTO_FOCUS = "#cp-tree"
    CSS_PATH = [STYLES / "checkpoints.tcss"]
    BINDINGS = [
        Binding("left_square_bracket", "step(-1)", "Older", show=True, key_display="["),
        Binding("right_square_bracket", "step(1)", "Newer", show=True, key_display="]"),
        Binding("f", "fork", "Fork here", show=True),
        Binding("R", "resume", "Resume", show=True),
        Binding("y", "copy", "Copy id", show=True),
    ]
    PALETTE = (
        ("Fork from entry", "A new loop from the selected history entry (f)", "fork"),
        ("Resume loop", "Run the selected loop to its next exit (R)", "resume"),
        ("Older entry", "Step back through the loop's history ([)", "step_back"),
        ("Newer entry", "Step forward through the loop's history (])", "step_on"),
        ("Search loop histories", "Premises, outputs, reasons in every loop's history (/)", "search_history"),
        ("Copy loop id", "Put the selected loop's id on the clipboard (y)", "copy"),
    )

    def __init__(self) -> None:
        super().__init__()
        self.seen: dict[str, int] = {}
        self.goal_nodes: dict[str, TreeNode] = {}
        self.loop_nodes: dict[str, TreeNode] = {}
        self.entry_nodes: dict[str, dict[int, TreeNode]] = {}
        self.history: dict[str, list[HistoryEntry]] = {}
        self.loading: set[str] = set()
        self.after_load: dict[str, int | str] = {}  # loop id -> entry index, "first" or "last"
        self._want: str | None = None  # a loop to select once its node shows up (a fork)
        self._shown_data: tuple | None = None  # what the Entry pane shows

    def compose(self) -> ComposeResult:
        yield from self.compose_header()
        with Container(id="cp-body"):
            tree: Tree = SyncedTree("goals", id="cp-tree")
            tree.show_root = False
            tree.auto_expand = True
            yield tree
            with VerticalScroll(id="entry-pane"):
                yield EntryBody("", id="entry-body")
        yield Static("", id="cp-empty")
        yield from self.compose_footer()

    def on_mount(self) -> None:
        self.query_one("#entry-pane").border_title = "Entry"
        self.query_one("#entry-body", EntryBody).show(
            "[dim]Open a loop (enter) to list its history; [b]\\[[/b] and [b]][/b] step through it with the "
            "diff of each step; [b]f[/b] forks from the selected entry; [b]R[/b] resumes the loop.[/]")
        self.query_one("#cp-tree", Tree).focus()
        super().on_mount()

    # -- the tree ----------------------------------------------------------------------------
    def loop_label(self, s: LoopState) -> Text:
        return loop_label(self.app, s)

    def goal_label(self, goal_id: str) -> Text:
        return goal_label(self.app, goal_id, self.store.states.values())

    def entry_label(self, e: HistoryEntry) -> Text:
        return entry_label(self.app, e)

    def sync(self, theme: bool = False) -> None:
        tree = self.query_one("#cp-tree", Tree)
        store = self.store
        if theme:
            self.seen.clear()
            self.query_one("#entry-body", EntryBody).shown = None  # its colours come from the theme
        changed, gone = store.changed_since(self.seen)
        goals_touched: set[str] = set()
        for loop_id in gone:
            self.seen.pop(loop_id, None)
            node = self.loop_nodes.pop(loop_id, None)
            if node is not None:
                goals_touched.add(node.parent.data[1] if node.parent and node.parent.data else "")
                node.remove()
            self.history.pop(loop_id, None)
            self.entry_nodes.pop(loop_id, None)
        for loop_id in sorted(changed, key=lambda i: store.states[i].created_at):
            s = store.states[loop_id]
            self.seen[loop_id] = store.versions[loop_id]
            goal = self.goal_nodes.get(s.goal_id)
            if goal is None:
                goal = self.goal_nodes[s.goal_id] = tree.root.add(self.goal_label(s.goal_id),
                                                                   data=("goal", s.goal_id), expand=False)
            goals_touched.add(s.goal_id)
            node = self.loop_nodes.get(loop_id)
            if node is None:
                node = self.loop_nodes[loop_id] = goal.add(self.loop_label(s), data=("loop", loop_id))
            else:
                node.set_label(self.loop_label(s))
                if loop_id in self.history:
                    self.load_history(loop_id)  # it moved on: read its new entries
        for goal_id in goals_touched:
            if goal_id in self.goal_nodes:
                self.goal_nodes[goal_id].set_label(self.goal_label(goal_id))
        want = getattr(self, "_want", None)
        if want is not None and want in self.loop_nodes:
            self._want = None
            self.select_loop(want)
        cursor = tree.cursor_node
        if cursor is not None and cursor.data and (
                (cursor.data[0] != "goal" and cursor.data[1] in changed)
                or (cursor.data[0] == "goal" and cursor.data[1] in goals_touched)):
            self.show_node(cursor)  # what the Entry pane says follows the loop (status, iteration)
        empty = self.query_one("#cp-empty", Static)
        text = "" if store.states else ("Loading…" if not store.loaded else
                                         "[b]No checkpoints yet.[/]\n\nEvery loop transition is checkpointed "
                                         "here; start one with  ars loop run --goal-file FILE  or  ars demo.")
        empty.update(text)
        empty.display = bool(text)
        self.query_one("#cp-body").display = not text
        if tree.cursor_node is None and self.goal_nodes:
            self.call_after_refresh(tree.move_cursor_to_line, 0)

    @on(Tree.NodeExpanded, "#cp-tree")
    def _expanded(self, event: Tree.NodeExpanded) -> None:
        data = event.node.data
        if data and data[0] == "loop" and data[1] not in self.history:
            self.load_history(data[1])

    @on(Tree.NodeHighlighted, "#cp-tree")
    def _highlighted(self, event: Tree.NodeHighlighted) -> None:
        node = event.node
        if node.data is not None and node.data == self._shown_data:
            # a step ([ ]) showed its entry at once: drawing it again when the cursor rests
            # would only rebuild the same diff; an older pending node must not win either
            self.cancel_soon("entry")
            return
        self.soon("entry", lambda: self.show_node(node))

    @work(thread=True, group="history")
    def load_history(self, loop_id: str) -> None:
        if loop_id in self.loading:
            return
        self.loading.add(loop_id)
        try:
            entries = self.app.ars.loop_history(loop_id)  # type: ignore[attr-defined]
        except BadInput as exc:
            self.app.call_from_thread(self.notify, str(exc), severity="error")
            return
        finally:
            self.loading.discard(loop_id)
        self.app.call_from_thread(self.show_history, loop_id, entries)

    def show_history(self, loop_id: str, entries: list[HistoryEntry]) -> None:
        node = self.loop_nodes.get(loop_id)
        if node is None:
            return
        self.history[loop_id] = entries
        # a history is ~100k long-lived objects: kept out of the cyclic collector, whose full
        # passes over them stalled [ and ] for ~100 ms every second or two (tui/idle_gc.py)
        idle_gc = getattr(self.app, "idle_gc", None)
        if idle_gc is not None:
            idle_gc.freeze_new()
        nodes = self.entry_nodes.setdefault(loop_id, {})
        for e in entries:
            if e.index not in nodes:
                nodes[e.index] = node.add_leaf(self.entry_label(e), data=("entry", loop_id, e.index))
        for index in [i for i in nodes if i not in {e.index for e in entries}]:
            nodes.pop(index).remove()  # dropped by retention
        if not node.is_expanded:
            node.expand()
        want = self.after_load.pop(loop_id, None)
        if want is not None and entries:
            index = entries[-1].index if want == "last" else entries[0].index if want == "first" else want
            target = nodes.get(index)  # type: ignore[arg-type]
            if target is not None:
                self.call_after_refresh(self._go, target)
        tree = self.query_one("#cp-tree", Tree)
        if tree.cursor_node is not None:
            self.show_node(tree.cursor_node)

    def on_resize(self, event) -> None:
        super().on_resize(event)
        # the layout changes (beside / stacked): the tree's height does, and the selected node
        # was left wherever the old scroll offset put it, often out of sight
        self.call_after_refresh(self._cursor_in_sight)

    def _cursor_in_sight(self) -> None:
        tree = self.query_one("#cp-tree", Tree)
        node = tree.cursor_node
        if node is not None and node.line >= 0:
            tree.scroll_to_node(node, animate=False)

    def _go(self, node: TreeNode, tries: int = 5) -> None:
        tree = self.query_one("#cp-tree", Tree)
        # Adding or expanding nodes resets every node's line until the tree rebuilds its lines on idle;
        # last_line rebuilds them now, so a node added a moment ago has its line.
        tree.last_line  # noqa: B018  (read for its side effect)
        if node.line < 0 and tries:  # not laid out yet (an ancestor expands on this refresh): retry
            self.call_after_refresh(self._go, node, tries - 1)
            return
        tree.move_cursor(node)
        self.show_node(node)

    def on_select_loop(self, msg: SelectLoop) -> None:
        """A fork was made: select it here (now, or when its node shows up)."""
        if msg.loop_id in self.loop_nodes:
            self.select_loop(msg.loop_id)
        else:
            self._want = msg.loop_id

    def retime(self) -> None:
        node = self.query_one("#cp-tree", Tree).cursor_node
        if node is not None:
            self.show_node(node, keep_scroll=True)

    # -- the entry pane --------------------------------------------------------------------------
    def show_node(self, node: TreeNode, keep_scroll: bool = False) -> None:
        body = self.query_one("#entry-body", EntryBody)
        data = node.data
        if not data:
            return
        if not keep_scroll and data != getattr(self, "_shown_data", None):
            # a new entry starts at its header ("entry #N"), not where the last one was scrolled to
            self.query_one("#entry-pane", VerticalScroll).scroll_home(animate=False)
        self._shown_data = data
        if data[0] == "goal":
            body.show(goal_text(data[1], [s for s in self.store.states.values() if s.goal_id == data[1]]))
            return
        if data[0] == "loop":
            s = self.store.states.get(data[1])
            if s is None:
                return
            body.show(loop_text(s, len(self.history.get(data[1], []))))
            return
        _, loop_id, index = data
        entries = self.history.get(loop_id, [])
        pos = next((i for i, e in enumerate(entries) if e.index == index), None)
        if pos is None:
            return
        e = entries[pos]
        prev = entries[pos - 1] if pos > 0 else None
        body.show(self.render_entry(e, prev, pos, len(entries)))

    def render_entry(self, e: HistoryEntry, prev: HistoryEntry | None, pos: int, total: int) -> str:
        return entry_text(e, prev, pos, total)

    # -- keys ----------------------------------------------------------------------------------------
    def focus_search(self) -> None:
        self.action_search_history()

    @work(exclusive=True, group="history-search")
    async def action_search_history(self) -> None:
        found = await self.app.push_screen_wait(HistorySearch(self.app.ars.loop_search))  # type: ignore[attr-defined]
        if found:
            loop_id, index = found
            self.select_loop(loop_id, index)

    def action_copy(self) -> None:
        data = self._cursor()
        self.copy_id(data[1] if data and data[0] != "goal" else None)

    def _cursor(self) -> tuple | None:
        node = self.query_one("#cp-tree", Tree).cursor_node
        return node.data if node is not None else None

    def action_step(self, delta: int) -> None:
        data = self._cursor()
        if not data:
            return
        if data[0] == "goal":  # step into the goal's newest loop
            loops = [n for n in self.goal_nodes[data[1]].children if n.data]
            if not loops:
                return
            self.goal_nodes[data[1]].expand()
            data = loops[-1].data
        loop_id = data[1]
        entries = self.history.get(loop_id)
        if entries is None:
            self.after_load[loop_id] = "last" if delta < 0 else "first"
            self.load_history(loop_id)
            return
        if not entries:
            return
        if data[0] == "loop":
            target = entries[-1] if delta < 0 else entries[0]
        else:
            pos = next((i for i, e in enumerate(entries) if e.index == data[2]), 0)
            nxt = pos + delta
            if not 0 <= nxt < len(entries):
                self.notify("the oldest entry kept" if delta < 0 else "the newest entry", timeout=2)
                return
            target = entries[nxt]
        node = self.entry_nodes.get(loop_id, {}).get(target.index)
        if node is not None:
            if node.parent is not None and not node.parent.is_expanded:
                node.parent.expand()
                self.call_after_refresh(self._go, node)
            else:
                self._go(node)

    def action_step_back(self) -> None:
        self.action_step(-1)

    def action_step_on(self) -> None:
        self.action_step(1)

    def selected_entry(self) -> HistoryEntry | None:
        data = self._cursor()
        if not data or data[0] != "entry":
            return None
        return next((e for e in self.history.get(data[1], []) if e.index == data[2]), None)

    def action_fork(self) -> None:
        e = self.selected_entry()
        if e is None:
            self.notify("select a history entry to fork from ([ and ] step through them)", severity="warning")
            return
        if e.state.status in TERMINAL:
            self.notify(f"entry #{e.index} is {e.state.status}: fork from an entry before the loop ended",
                        severity="warning")
            return
        self.app.fork(e.state.loop_id, e.index)  # type: ignore[attr-defined]

    def action_resume(self) -> None:
        data = self._cursor()
        if not data or data[0] == "goal":
            self.notify("select a loop (or one of its entries) to resume", severity="warning")
            return
        s = self.store.states.get(data[1])
        if s is None:
            return
        if s.status in TERMINAL:
            self.notify(f"{s.loop_id} is {s.status}: fork it from an earlier entry (f)", severity="warning")
            return
        if s.status in ("waiting_human", "blocked"):
            self.notify(f"{s.loop_id} waits for a decision: answer it in the Inbox (2)", severity="warning")
            return
        self.app.resume(s.loop_id)  # type: ignore[attr-defined]
        self.notify(f"resuming {s.loop_id}…")

    def select_loop(self, loop_id: str, index: int | None = None) -> None:
        """Open one loop's history and select its newest entry (or entry ``index``)."""
        node = self.loop_nodes.get(loop_id)
        if node is None:
            self._want = loop_id
            return
        if node.parent is not None:
            node.parent.expand()
        self.after_load[loop_id] = "last" if index is None else index
        if loop_id in self.history:
            self.show_history(loop_id, self.history[loop_id])
        else:
            node.expand()  # NodeExpanded loads it
            self.load_history(loop_id)
