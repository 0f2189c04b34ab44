"""Scrollbars that show where the view is.

Textual (8.2) moves a scrollbar's thumb only while that scrollbar is shown. A
tree or table that grows and scrolls in one go (open a loop's history, jump to
its newest entry) is scrolled before layout decides it needs a scrollbar, so
the scrollbar appears with its thumb at the top while the view shows the
bottom, until the next scroll. ``ScrollbarInSync`` puts the thumb where the
view is the moment a scrollbar appears.
"""

from __future__ import annotations

from textual.widgets import Tree


class ScrollbarInSync:
    """Mix in before a scrollable Textual widget class (``class T(ScrollbarInSync, Tree)``)."""

    def watch_show_vertical_scrollbar(self, shown: bool) -> None:
        if shown:
            self.vertical_scrollbar.position = self.scroll_y  # type: ignore[attr-defined]

    def watch_show_horizontal_scrollbar(self, shown: bool) -> None:
        if shown:
            self.horizontal_scrollbar.position = self.scroll_x  # type: ignore[attr-defined]


class SyncedTree(ScrollbarInSync, Tree):
    """A Tree whose scrollbar follows a jump made while the tree grew (Checkpoints' history)."""
