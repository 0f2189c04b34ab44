"""A passphrase box that never holds the passphrase as a ``str``.

Textual's ``Input`` keeps its value as a string (and a new string for every key
typed: each prefix of the passphrase left behind in freed memory). This widget
keeps the UTF-8 bytes in one preallocated ``bytearray`` (no reallocation as it
grows), shows one bullet per character, and zeroes the buffer when it is taken or
the widget goes away. Keys: characters add, backspace removes the last, ctrl+u
clears, enter posts ``Submitted`` (the owner takes the bytes with ``take()``).
"""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.message import Message
from textual.widget import Widget

MAX_BYTES = 4096


class SecretInput(Widget, can_focus=True):
    DEFAULT_CSS = """
    SecretInput {
        height: 1;
        background: $boost;
        padding: 0 1;
    }
    SecretInput:focus {
        background: $surface-lighten-1;
    }
    """

    class Submitted(Message):
        """Enter was pressed (the bytes stay in the widget until ``take()``)."""

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self._buf = bytearray(MAX_BYTES)
        self._sizes: list[int] = []  # bytes of each character typed, for backspace
        self._n = 0

    @property
    def chars(self) -> int:
        return len(self._sizes)

    def render(self) -> Text:
        return Text("•" * self.chars + ("▏" if self.has_focus else ""), no_wrap=True, overflow="crop")

    def take(self) -> bytearray:
        """The typed bytes as a new bytearray (the caller wipes it); the box is emptied."""
        out = bytearray(self._n)
        out[:] = memoryview(self._buf)[:self._n]
        self.clear()
        return out

    def clear(self) -> None:
        from core.api import wipe

        wipe(self._buf)
        self._sizes.clear()
        self._n = 0
        self.refresh()

    def _add(self, character: str) -> None:
        data = character.encode("utf-8", "surrogatepass")
        if self._n + len(data) > MAX_BYTES:
            self.app.bell()
            return
        self._buf[self._n:self._n + len(data)] = data
        self._n += len(data)
        self._sizes.append(len(data))

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.post_message(self.Submitted())
        elif event.key in ("backspace", "ctrl+h"):
            event.stop()
            if self._sizes:
                size = self._sizes.pop()
                self._n -= size
                self._buf[self._n:self._n + size] = bytes(size)
                self.refresh()
        elif event.key == "ctrl+u":
            event.stop()
            self.clear()
        elif event.is_printable and event.character:
            event.stop()
            event.prevent_default()
            self._add(event.character)
            self.refresh()

    def _on_paste(self, event: events.Paste) -> None:
        event.stop()
        for ch in event.text.rstrip("\r\n"):
            self._add(ch)
        self.refresh()

    def on_unmount(self) -> None:
        self.clear()
