"""A DataTable with one flexible column that takes the width the others leave,
so a table fits its pane at 80 columns and uses the room at 160 (no sideways
scrolling for the common case)."""

from __future__ import annotations

from textual.events import Resize
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey


class FlexTable(DataTable):
    """``enter_label`` names what enter does on a row (shown in the footer)."""

    def __init__(self, *args, flex: str, min_flex: int = 8, enter_label: str = "", **kwargs):
        super().__init__(*args, **kwargs)
        self.flex = flex
        self.min_flex = min_flex
        if enter_label:
            self._bindings.bind("enter", "select_cursor", enter_label, show=True)

    def on_resize(self, _event: Resize) -> None:
        self.fit()

    def fit(self) -> None:
        key = ColumnKey(self.flex)
        column = self.columns.get(key)
        if column is None or not self.size.width:
            return
        others = sum(c.get_render_width(self) for k, c in self.columns.items() if k != key)
        # one column spare for the vertical scrollbar that appears with many rows
        width = max(self.min_flex, self.size.width - others - 2 * self.cell_padding - 1)
        if column.auto_width or column.width != width:
            column.auto_width = False
            column.width = width
            self._require_update_dimensions = True  # DataTable recomputes its virtual size
            self.refresh()
