"""The footer every view shares: Textual's, redrawn only when the keys it
shows change. Textual's own footer rebuilds (and restyles) every key on each
bindings signal, and a view switch or a focus change sends several: that was
most of what a view switch cost."""

from __future__ import annotations

from textual.widgets import Footer


class ArsFooter(Footer):
    def _shown(self, screen) -> tuple:
        return tuple((key, b.binding.description, b.binding.action, b.enabled, b.binding.show)
                     for key, b in screen.active_bindings.items())

    def bindings_changed(self, screen) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus or not self.is_attached or screen is not self.screen:
            return
        if self.__dict__.get("_pending"):
            return  # one redraw per refresh, however many signals came
        self.__dict__["_pending"] = True
        self.call_after_refresh(self._redraw)

    async def _redraw(self) -> None:
        self.__dict__["_pending"] = False
        shown = self._shown(self.screen)
        if shown == self.__dict__.get("_drawn"):
            return
        self.__dict__["_drawn"] = shown
        await self.recompose()
