"""A view that grows and jumps in one go shows its scrollbar's thumb where the view is.

Textual moves a thumb only while its scrollbar is shown; Checkpoints opens a
loop's history and jumps to its newest entry before layout shows the
scrollbar, and the thumb stayed at the top (a flaky snapshot found it).
"""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Tree

from tui.widgets.scrollbar_sync import SyncedTree


def grow_tree(t: Tree) -> None:
    for i in range(20):
        t.root.add_leaf(f"entry {i}")
    t.last_line  # noqa: B018  (lays the new lines out now, as Checkpoints does before jumping)
    t.move_cursor(t.root.children[-1])


class Holder(App):
    CSS = "Tree { height: 6; }"

    def __init__(self, widget) -> None:
        super().__init__()
        self.widget = widget

    def compose(self) -> ComposeResult:
        yield self.widget


def make_tree():
    t = SyncedTree("root")
    t.root.expand()
    return t


async def test_thumb_follows_a_jump_made_while_growing():
    widget = make_tree()
    app = Holder(widget)
    async with app.run_test(size=(40, 10)) as pilot:
        await pilot.pause()
        assert not widget.show_vertical_scrollbar
        grow_tree(widget)
        await pilot.pause()
        await pilot.pause()
        assert widget.show_vertical_scrollbar
        assert widget.scroll_y == widget.max_scroll_y > 0  # it jumped to the end
        assert widget.vertical_scrollbar.position == widget.scroll_y


async def test_a_plain_tree_leaves_the_thumb_behind():
    """The Textual behaviour the mixin corrects: if this starts passing with the plain Tree, drop the mixin."""
    widget = Tree("root")
    widget.root.expand()
    app = Holder(widget)
    async with app.run_test(size=(40, 10)) as pilot:
        await pilot.pause()
        grow_tree(widget)
        await pilot.pause()
        await pilot.pause()
        assert widget.scroll_y > 0
        assert widget.vertical_scrollbar.position == 0
