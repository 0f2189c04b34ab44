"""The footer every view shares: Textual's, redrawn only when the keys it
shows change. Textual's own footer rebuilds (and restyles) every key on each
bindings signal, and a view switch or a focus change sends several: that was
most of what a view switch cost.

Keys that do not fit beside the palette key are left out, last first: Textual's
footer scrolls them under the palette, which showed half a key at 80 columns
("n Next w") and, through the palette's margin, a letter of it in the last
column."""

from __future__ import annotations

from textual.events import Resize
from textual.geometry import Size
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

ALWAYS = ("help",)  # actions whose key is never left out


class ArsFooter(Footer):
    _pending = False  # a redraw is asked for (after the next refresh)
    _drawn: tuple | None = None  # the keys last drawn (``_shown``)

    def _shown(self, screen) -> tuple:
        return tuple((key, b.binding.description, b.binding.action, b.enabled, b.binding.show)
                     for key, b in screen.active_bindings.items())

    def bindings_changed(self, screen) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus or not self.is_attached or screen is not self.screen:
            return
        if self._pending:
            return  # one redraw per refresh, however many signals came
        self._pending = True
        self.call_after_refresh(self._redraw)

    async def _redraw(self) -> None:
        self._pending = False
        shown = self._shown(self.screen)
        if shown == self._drawn:
            return
        self._drawn = shown
        await self.recompose()
        self.fit()

    def on_resize(self, _event: Resize) -> None:
        self.fit()

    def fit(self) -> None:
        """Show the keys, in order, while they fit beside the palette key; hide the rest."""
        if not self.size.width:
            return
        palette, keys = [], []
        for k in self.query(FooterKey):
            (palette if k.has_class("-command-palette") else keys).append(k)
        # help always shows (it lists every key, the left-out ones too), then the rest in order
        kept = [k for k in keys if k.action in ALWAYS]
        room = self.size.width - sum(self._width(k) for k in palette + kept)
        used = 0
        for k in keys:
            if k.action in ALWAYS:
                continue
            used += self._width(k)
            k.display = used <= room

    @staticmethod
    def _width(key: FooterKey) -> int:
        # from the key's text and its CSS box, so a hidden key is measured as it would show
        content = key.get_content_width(Size(0, 0), Size(0, 0))
        return content + key.styles.gutter.width + key.styles.margin.width
