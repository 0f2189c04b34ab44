"""The Request pane's context: what the agent did before asking (its
transcript's last turns, or the loop's last steps) and what ARS remembers that
is related (a recall of the request's words). Both are read in a thread worker
the first time a request is shown, and kept for it."""

from __future__ import annotations

from textual import work

from core.api import InboxRequest, LoopState

from tui.messages import RequestContextRead
from tui.widgets.request_pane import context_markup
from tui.widgets.status import one_line

RELATED = 3  # memories shown
CONTEXT_KEPT = 200  # requests whose context is kept
CONTEXT_DELAY = 0.3  # seconds the selection rests before the context is read


class InboxContext:
    """Mixed into ``InboxScreen``."""

    def context_for(self, key: str, r: InboxRequest, s: LoopState | None) -> str:
        cache: dict[str, str | None] = self.__dict__.setdefault("_ctx_cache", {})
        if r.id in cache:
            return cache[r.id] or ""
        if len(cache) >= CONTEXT_KEPT:
            cache.clear()
        # once the cursor rests: its recall in a thread holds the GIL for a while, not under the key
        # that brought the request up (n, a view switch)
        self.soon("context", lambda: self._start_context(key, r, s), delay=CONTEXT_DELAY)  # type: ignore[attr-defined]
        return "\n\n[dim]reading the agent's last turns and related memories…[/]"

    def _start_context(self, key: str, r: InboxRequest, s: LoopState | None) -> None:
        cache: dict[str, str | None] = self.__dict__.setdefault("_ctx_cache", {})
        if r.id not in cache:
            cache[r.id] = None  # asked once
            self._read_context(key, r, s)

    @work(thread=True, group="inbox-context")
    def _read_context(self, key: str, r: InboxRequest, s: LoopState | None) -> None:
        ars = self.app.ars  # type: ignore[attr-defined]
        try:
            turns = ars.inbox_context(r, s)
        except Exception as exc:  # noqa: BLE001 - the pane still shows the request
            turns = [f"the agent's last turns could not be read: {one_line(str(exc), 160)}"]
        words = one_line(r.detail or r.summary, 200)
        memories: list[str] = []
        try:
            result = ars.recall(words, k=RELATED)
            memories = [f"{h.episode_id[:12]} {one_line(h.snippet, 240)}" for h in result.hits[:RELATED]
                        if h.snippet]
        except Exception as exc:  # noqa: BLE001 - a recall that fails says so in one line
            memories = [f"recall failed: {one_line(str(exc), 160)}"]
        self.post_message(RequestContextRead(key, r.id, context_markup(turns, memories, loop=s is not None)))  # type: ignore[attr-defined]

    def on_request_context_read(self, msg: RequestContextRead) -> None:
        self.__dict__.setdefault("_ctx_cache", {})[msg.request_id] = msg.markup
        if self.current_key() == msg.key:  # type: ignore[attr-defined]
            self.show_request()  # type: ignore[attr-defined]
