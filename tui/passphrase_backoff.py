"""Back-off after a wrong supervisor passphrase, shared by the dashboard's prompt and
each page of ``ars serve``: the next try waits 1, 2, 4 ... up to 300 s, so a prompt is
never a faster guessing oracle than copying key.enc and guessing offline at the KDF's
pace (core/inbox/key_file.py). A right passphrase clears it.
"""

from __future__ import annotations

import time

MAX_BACKOFF = 300.0


class Backoff:
    """After a wrong passphrase the next try waits 1, 2, 4 ... up to ``MAX_BACKOFF`` seconds."""

    def __init__(self) -> None:
        self.fails = 0
        self.not_before = 0.0

    def wait_left(self) -> float:
        return max(0.0, self.not_before - time.monotonic())

    def failed(self) -> None:
        self.fails += 1
        self.not_before = time.monotonic() + min(2.0 ** (self.fails - 1), MAX_BACKOFF)

    def succeeded(self) -> None:
        self.fails = 0
        self.not_before = 0.0
