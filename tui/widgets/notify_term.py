"""Reaching a supervisor who is not looking at the dashboard: the terminal bell,
a desktop notification and the window title's count, as escape sequences
written to the terminal.

Why raw sequences, and why through ``app._driver.write``: Textual has
``App.bell()`` (a BEL, and nothing while headless) but no API for OSC 9 / 777
desktop notifications or the OSC 2 window title (``App.title`` only feeds the
Header widget). Its own clipboard (OSC 52) and pointer-shape (OSC 22) support
write through ``self._driver.write`` exactly like this: the driver's writer
thread orders the bytes with the frames it draws, so a sequence never lands in
the middle of a screen update. This module is the one seam that touches that
private attribute; if Textual renames it, only ``_write`` changes.

* BEL: the terminal beeps or flags the window (tmux: the bell flag).
* OSC 9 (iTerm2, WezTerm, Windows Terminal, kitty, foot, ghostty) and OSC 777
  ``notify`` (rxvt-unicode, VTE terminals: GNOME Terminal, Tilix) raise a desktop
  notification; a terminal that knows neither ignores them.
* Inside tmux the two notifications are also wrapped in tmux's passthrough (DCS
  ``tmux;``), which reaches the outer terminal when tmux has
  ``set -g allow-passthrough on``; tmux itself takes the BEL and the title.
* No secret leaves: the text is what the inbox shows (its secrets redacted when
  the request was made), redacted once more here (a loop's prompt), control
  characters removed, cut to one short line.
"""

from __future__ import annotations

import os
import re

from textual.app import App

MAX_TEXT = 180  # characters of the notification's body
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def clean(text: str, limit: int = MAX_TEXT) -> str:
    """One line of text safe inside an OSC sequence (no ESC, BEL or ``;`` ending it early
    for OSC 777's fields), secrets redacted."""
    from core.api import redact_text

    text = " ".join(_CONTROL.sub(" ", redact_text(str(text))).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _tmux(seq: str) -> str:
    """``seq`` wrapped for tmux's passthrough (every ESC inside doubled)."""
    return "\x1bPtmux;" + seq.replace("\x1b", "\x1b\x1b") + "\x1b\\"


class TerminalNotifier:
    """Writes the bell, notifications and title for one app; ``sent`` keeps what it wrote
    (the event log of what reached the terminal, read by the tests)."""

    def __init__(self, app: App, *, in_tmux: bool | None = None):
        self.app = app
        self.in_tmux = bool(os.environ.get("TMUX")) if in_tmux is None else in_tmux
        self.sent: list[str] = []
        self._title = ""

    def _write(self, data: str) -> None:
        self.sent.append(data)
        driver = getattr(self.app, "_driver", None)
        if driver is not None and not self.app.is_headless:
            driver.write(data)

    def announce(self, title: str, body: str) -> None:
        """A new request: the bell and a desktop notification (title and body redacted)."""
        head, text = clean(title, 60).replace(";", ","), clean(body)
        osc9 = f"\x1b]9;{head}: {text}\x07"
        osc777 = f"\x1b]777;notify;{head};{text.replace(';', ',')}\x07"
        out = "\x07" + osc9 + osc777
        if self.in_tmux:
            out = "\x07" + _tmux(osc9) + _tmux(osc777)
        self._write(out)

    def set_title(self, title: str) -> None:
        """The window (and tmux pane) title: OSC 2, written only when it changes."""
        title = clean(title, 80)
        if title != self._title:
            self._title = title
            self._write(f"\x1b]2;{title}\x07")
