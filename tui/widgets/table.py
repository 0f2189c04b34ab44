"""DataTables that lay out on time: ``RowsTable`` sizes an auto height from
its rows, and ``FlexTable`` adds one flexible column that takes the width the
others leave, so a table fits its pane at 80 columns and uses the room at 160
(no sideways scrolling for the common case)."""

from __future__ import annotations

from textual.events import Resize
from textual.geometry import Size
from textual.widgets.data_table import ColumnKey

from tui.widgets.textual_patches import PaintOncePatch


class RowsTable(PaintOncePatch):
    """``height: auto`` from the rows it holds now. DataTable's own auto height
    follows its virtual size, which it measures on idle; a layout pass that ran
    before that measurement left a freshly filled table 0 lines tall."""

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        header = self.header_height if self.show_header else 0
        return header + sum(row.height for row in self.rows.values())

    def filled(self) -> None:
        """Call after adding or clearing rows: lay the table out again."""
        self.refresh(layout=True)

    # Home and End go to the first and last row, as a person reading a list expects: DataTable's
    # own move to the first or last *column*, which a row cursor does not have (nothing happened)
    def action_scroll_home(self) -> None:
        if self.cursor_type == "row":
            self.action_scroll_top()
        else:
            super().action_scroll_home()

    def action_scroll_end(self) -> None:
        if self.cursor_type == "row":
            self.action_scroll_bottom()
        else:
            super().action_scroll_end()


class FlexTable(RowsTable):
    """``enter_label`` names what enter does on a row (shown in the footer)."""

    def __init__(self, *args, flex: str, min_flex: int = 8, enter_label: str = "", **kwargs):
        super().__init__(*args, **kwargs)
        self.flex = flex
        self.min_flex = min_flex
        if enter_label:
            from textual.binding import Binding, BindingsMap

            # this table's own map: the class's one is shared by every table (a label bound on it
            # would show on all of them), and DataTable's hidden "Select" must give way to the label
            own = BindingsMap()
            own.key_to_bindings = {k: list(v) for k, v in self._bindings.key_to_bindings.items()}
            own.key_to_bindings["enter"] = [Binding("enter", "select_cursor", enter_label, show=True)]
            self._bindings = own

    # whether enter does anything on the row under the cursor now (None: always); when it does not,
    # the footer does not offer it (an approval offered "Respond", then refused it)
    enter_allowed = None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "select_cursor" and self.enter_allowed is not None and not self.enter_allowed():
            return False
        return super().check_action(action, parameters)

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


class KeyedTable(FlexTable):
    """A FlexTable whose rows are known by key: the cursor follows a row's key
    through inserts, removals and re-sorts (never its position), rows are
    removed in bulk and ordered by key in one pass (DataTable's own
    ``remove_row`` renumbers every row per call, its ``sort`` sees only cell
    values)."""

    CELLS_KEPT = 4000  # rendered cells kept by content (a few screens of a 6-column table)
    _cells_by_content = None  # LRUCache: cell render by what decides it (made on the first render)

    def _render_cell(self, row_index: int, column_index: int, base_style, width: int, cursor: bool = False,
                     hover: bool = False):
        """DataTable keys its cell renders by its update count, so any row added, removed or
        changed re-renders every visible cell (~30 ms for a 160-column screen of loops on a
        busy CPU): ``w`` off, a filter cleared, the age column ticking. Here a cell's render is
        also kept by what decides it: the cell object itself (the views keep a loop's cells
        while the loop does not move), its place (row and column, which the render's mouse
        metadata holds), width and styles. A cell that is the same object in the same place
        renders from this cache."""
        if row_index < 0 or column_index < 0:  # the header and row labels: DataTable's own caching
            return super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        try:
            row_key = self._row_locations.get_key(row_index)
            column_key = self._column_locations.get_key(column_index)
            cell = self._data[row_key][column_key]
        except KeyError:
            return super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        row = self.rows.get(row_key)
        key = (row_index, column_index, id(cell), width, base_style, cursor, hover, self._show_hover_cursor,
               self._pseudo_class_state, row.height if row is not None else None, self.show_cursor,
               self.cursor_type, self.cursor_foreground_priority, self.cursor_background_priority)
        cache = self._cells_by_content
        if cache is None:
            from textual.cache import LRUCache

            cache = self._cells_by_content = LRUCache(self.CELLS_KEPT)
        hit = cache.get(key)
        if hit is not None and hit[0] is cell:  # the very object (an id can be reused once it is freed)
            return hit[1]
        lines = super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        cache[key] = (cell, lines)
        return lines

    def notify_style_update(self) -> None:
        before = self._painted_with
        super().notify_style_update()
        if self._painted_with != before:  # new colours (a theme): every kept render is stale
            if self._cells_by_content is not None:
                self._cells_by_content.clear()

    def cursor_key(self) -> str | None:
        if not self.row_count:
            return None
        try:
            return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        except Exception:  # noqa: BLE001 - no cursor yet
            return None

    def go_to(self, key: str | None) -> bool:
        """Put the cursor on the row ``key`` (False when there is none)."""
        if key is None:
            return False
        try:
            index = self.get_row_index(key)
        except Exception:  # noqa: BLE001 - the row is not (or no longer) here
            return False
        if index != self.cursor_row:
            self.move_cursor(row=index, animate=False)
        return True

    def add_keyed_rows(self, rows) -> None:
        """Add ``(key, cells)`` rows at the bottom, as ``add_row`` does one by one.
        DataTable's ``add_row`` re-validates the cursor, looks the columns up and
        bumps the render generation per row: ~20 ms of a 1,000-row filter being
        cleared (``w`` off) on a busy CPU. Here that is done once for all of them."""
        from itertools import zip_longest

        from textual.widgets.data_table import DuplicateKey, Row, RowKey

        rows = list(rows)
        if not rows:
            return
        columns = [c.key for c in self.ordered_columns]
        if any(len(cells) > len(columns) for _key, cells in rows):
            raise ValueError("More values provided than there are columns.")
        was_empty = self.row_count == 0
        index = self.row_count
        for key, cells in rows:
            rk = RowKey(key)
            if rk in self._row_locations:
                raise DuplicateKey(f"The row key {rk!r} already exists.")
            self._row_locations[rk] = index
            self._data[rk] = dict(zip_longest(columns, cells))
            self.rows[rk] = Row(rk, 1, None, False)
            self._new_rows.add(rk)
            index += 1
        self._require_update_dimensions = True
        self.cursor_coordinate = self.cursor_coordinate
        if was_empty and columns and self.show_cursor and self.cursor_type != "none":
            self._highlight_cursor()  # as add_row: a cursor can show now that there is a row
        self._update_count += 1
        self.check_idle()

    def remove_rows(self, keys) -> None:
        from textual.widgets.data_table import CellKey, RowKey

        doomed = {RowKey(k) for k in keys} & set(self.rows)
        if not doomed:
            return
        for rk in doomed:
            for ck in self._data.get(rk, {}):
                self._updated_cells.discard(CellKey(rk, ck))
            del self.rows[rk]
            del self._data[rk]
            self._new_rows.discard(rk)
        self._require_update_dimensions = True  # the virtual height shrank
        self._renumber(sorted(self.rows, key=lambda rk: self._row_locations.get(rk)))

    def order_rows(self, keys_in_order) -> None:
        """Rows in the order of ``keys_in_order`` (keys not given go last, as they were)."""
        from textual.widgets.data_table import RowKey

        wanted = [RowKey(k) for k in keys_in_order]
        present = set(self.rows)
        order = [rk for rk in wanted if rk in present]
        if len(order) < len(present):
            listed = set(order)
            order += sorted((rk for rk in present if rk not in listed), key=lambda rk: self._row_locations.get(rk))
        current = sorted(present, key=lambda rk: self._row_locations.get(rk))
        if order != current:
            self._renumber(order)

    def _renumber(self, order) -> None:
        from textual._two_way_dict import TwoWayDict

        self._row_locations = TwoWayDict({rk: i for i, rk in enumerate(order)})
        self.cursor_coordinate = self.cursor_coordinate
        self.hover_coordinate = self.hover_coordinate
        self._update_count += 1
        self.refresh(layout=True)

    def _update_dimensions(self, new_rows) -> None:
        """DataTable measures every cell of every new row to size its auto-width
        columns: 6,000 measurements when a filter is cleared on 1,000 loops
        (~0.6 s on a busy CPU). These tables' columns all have fixed widths once
        laid out (``fit``), so only the virtual size needs computing then."""
        if any(c.auto_width for c in self.columns.values()) or any(
                self.rows[rk].auto_height for rk in new_rows if rk in self.rows):
            super()._update_dimensions(new_rows)
            return
        from textual.geometry import Size

        width = sum(c.get_render_width(self) for c in self.columns.values()) + self._row_label_column_width
        header = self.header_height if self.show_header else 0
        self.virtual_size = Size(width, self._total_row_height + header)
