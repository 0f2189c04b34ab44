"""Textual workarounds, in one place, checked against the installed Textual version.

They override or read DataTable's private attributes (``_row_render_cache``,
``_cell_render_cache``, ``_row_renderable_cache``, ``_line_cache``, ``_update_count``):
written for Textual 8.2, whose pixels the snapshot tests compare (pyproject.toml pins
it). Another Textual may have renamed or reshaped them, so importing this module with a
Textual outside ``WRITTEN_FOR`` fails at once with one line saying so, rather than
painting stale rows. ``KeyedTable`` (table.py) also keeps DataTable's private row
bookkeeping in step, and imports this module, so the same check guards it.
``scrollbar_sync.py`` is the other seam of this kind.
"""

from __future__ import annotations

import textual
from textual.widget import Widget
from textual.widgets import DataTable

WRITTEN_FOR = ((8, 2), (8, 3))  # Textual versions from the first up to (not including) the second


class TextualVersionError(RuntimeError):
    pass


def check_textual_version(version: str = textual.__version__) -> None:
    """TextualVersionError, in one line, when ``version`` is outside ``WRITTEN_FOR``."""
    try:
        major_minor = tuple(int(part) for part in version.split(".")[:2])
    except ValueError:
        major_minor = ()
    low, high = WRITTEN_FOR
    if not (len(major_minor) == 2 and low <= major_minor < high):
        raise TextualVersionError(
            f"Textual {version} is installed, but tui/widgets/textual_patches.py was written for Textual "
            f"{low[0]}.{low[1]}.x: install the version pyproject.toml pins, or check the patches against {version}")


check_textual_version()


class _PaintStyles:
    """A component's styles for one paint: its Rich style computed once (each read of
    ``RenderStyles.rich_style`` walks the ancestors again); anything else is read through."""

    __slots__ = ("_styles", "rich_style")

    def __init__(self, styles) -> None:
        self._styles = styles
        self.rich_style = styles.rich_style

    def __getattr__(self, name: str):
        return getattr(self._styles, name)


class PaintOncePatch(DataTable):
    """DataTable with its style look-ups made once per paint and its render caches kept to
    the rows on screen (``RowsTable`` in table.py builds on it)."""

    _painted_with: tuple | None = None  # the styles its cached rows were rendered with
    _paint_styles: dict | None = None  # during a paint: the styles looked up in it (render_lines)
    _cached_for: int | None = None  # the update count DataTable's render caches hold rows of

    def render_lines(self, crop):
        # One paint: the styles cannot change while it runs. DataTable looks its component
        # styles, its own style and its background up again for every line it draws, and each
        # look-up walks every ancestor's styles (~0.3 ms a line, ~10 ms a screen of rows; more
        # on a busy CPU): under every key that moves the cursor or changes the rows. Here each is
        # looked up once per paint, and forgotten after it, so a theme or CSS change is never
        # painted with old colours.
        self._paint_styles = {}
        try:
            return self._render_lines_cached(crop)
        finally:
            self._paint_styles = None

    def get_component_styles(self, *names: str):
        if self._paint_styles is None:
            return super().get_component_styles(*names)
        return self._per_paint(names, lambda: _PaintStyles(super(PaintOncePatch, self).get_component_styles(*names)))

    def _per_paint(self, key, compute):
        memo = self._paint_styles
        if memo is None:
            return compute()
        hit = memo.get(key)
        if hit is None:
            hit = memo[key] = compute()
        return hit

    @property
    def rich_style(self):
        return self._per_paint("rich_style", lambda: super(PaintOncePatch, self).rich_style)

    @property
    def background_colors(self):
        return self._per_paint("background_colors", lambda: super(PaintOncePatch, self).background_colors)

    def _render_lines_cached(self, crop):
        # DataTable's render caches are keyed by its update count, which every row added,
        # removed or changed bumps: entries of an older count are never read again, but stay
        # until 1,000-10,000 newer ones push them out. Dropped here, the caches hold only the
        # rows on screen now: a few thousand fewer objects for every full garbage collection
        # to walk (tui/idle_gc.py) after a filter or a re-sort.
        if self._update_count != self._cached_for:
            self._cached_for = self._update_count
            for cache in (self._row_render_cache, self._cell_render_cache, self._row_renderable_cache,
                          self._line_cache):
                cache.clear()
        return super().render_lines(crop)

    def notify_style_update(self) -> None:
        # DataTable drops every rendered cell and line on any style update, and switching views
        # re-applies styles to every widget of the screen: each switch re-rendered every visible
        # row of a table that had not changed. Drop them only when the styles the rows are painted
        # with changed (a theme, CSS); focus and hover are already part of DataTable's cache keys.
        Widget.notify_style_update(self)  # the widget's own style caches, before reading its styles
        try:
            painted = (self.rich_style, tuple(self.get_component_styles(name).rich_style
                                              for name in sorted(self.COMPONENT_CLASSES)))
        except KeyError:  # not styled yet (before mount): nothing cached to keep
            painted = None
        if painted is not None and painted == self._painted_with:
            return
        self._painted_with = painted
        super().notify_style_update()


def drop_toast_holders(app) -> None:
    """Remove the toast holders on ``app``'s screen's toast rack, before the newest toast is shown.

    Textual 8.2's ``ToastRack.show`` removes a stale ``Toast`` but not the ``ToastHolder``
    that wraps it. When the dashboard shows one toast at a time (tui/app_notices.py), every
    toast after the first left an empty holder above it, so each new one was drawn a line
    lower: at 80x24 it covered the list's first row."""
    from textual.app import ScreenStackError
    from textual.css.query import NoMatches
    from textual.widgets._toast import ToastHolder, ToastRack

    try:
        rack = app.screen.get_child_by_type(ToastRack)
    except (NoMatches, ScreenStackError):  # no rack, or no screen (a notice as the app closes)
        return
    for holder in list(rack.query(ToastHolder)):
        holder.remove()
