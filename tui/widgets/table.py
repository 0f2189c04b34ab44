"""DataTables that lay out on time: ``RowsTable`` sizes an auto height from
its rows, and ``FlexTable`` adds one flexible column that takes the width the
others leave, so a table fits its pane at 80 columns and uses the room at 160
(no sideways scrolling for the common case)."""

from __future__ import annotations

from textual.events import Resize
from textual.geometry import Size
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey


class RowsTable(DataTable):
    """``height: auto`` from the rows it holds now. DataTable's own auto height
    follows its virtual size, which it measures on idle; a layout pass that ran
    before that measurement left a freshly filled table 0 lines tall."""

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        header = self.header_height if self.show_header else 0
        return header + sum(row.height for row in self.rows.values())

    def filled(self) -> None:
        """Call after adding or clearing rows: lay the table out again."""
        self.refresh(layout=True)


class FlexTable(RowsTable):
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
