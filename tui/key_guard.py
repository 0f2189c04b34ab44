"""The dashboard's hold on the supervisor's key: when it asks for the passphrase, how long
the unlocked key stays, and what the real prompt shows that a look-alike cannot.

* **Every approval asks.** ``approve`` and ``edit`` (which approves) let a held call or a
  loop's action run, and ``forget`` erases evidence: each asks for the passphrase again,
  whatever the request says its risk is (the agent can write its own request file). A
  person who pressed ``a`` ``y`` sees the prompt; keys sent by another process (``tmux
  send-keys``) do not know the passphrase, so they cannot approve anything.
* **Rejections and answers** use the key unlocked by the last passphrase typed, until
  ``lock_after`` seconds (``ARS_KEY_LOCK_AFTER``, default 300) have passed since it was
  typed; then the key is dropped. Key presses do not keep it: any process that reaches
  the terminal can press keys.
* **The check words.** At start the dashboard draws three words (``amber otter 42``) that
  live only in its memory (non-dumpable: ``ars tui`` calls ``no_dumps`` at start) and on its
  screen: the header shows them and so does every real passphrase prompt, beside the
  pinned key's fingerprint and the hash of exactly what will run. A prompt drawn by another
  process onto your terminal cannot know them. Inside tmux or screen, any process of your
  user can read the screen (``capture-pane``): the prompt says so (README, "The real prompt").
* **Wrong passphrases back off** (1, 2, 4 ... 300 s, tui/passphrase_backoff.py), across
  prompts: the prompt stays open, says the wait, and takes the passphrase after it.
"""

from __future__ import annotations

import os
import secrets
import time
from typing import Any

from tui.passphrase_backoff import Backoff

FRESH = ("approve", "edit", "forget")  # verdicts that let something happen: the passphrase each time
COLOURS = ("amber", "azure", "coral", "ivory", "jade", "lilac", "ochre", "olive", "pearl", "plum", "rust", "sage",
           "slate", "teal", "umber", "violet")
ANIMALS = ("badger", "crane", "falcon", "gecko", "heron", "ibis", "lynx", "marten", "newt", "otter", "puffin",
           "quail", "raven", "stoat", "tapir", "wren")


def check_words() -> str:
    return f"{secrets.choice(COLOURS)} {secrets.choice(ANIMALS)} {secrets.randbelow(90) + 10}"


def shared_screen() -> str:
    """The multiplexer this runs in ("tmux", "screen") or "": then other processes can read its screen."""
    if os.environ.get("TMUX"):
        return "tmux"
    if os.environ.get("STY"):
        return "screen"
    return ""


class KeyGuard:
    def __init__(self, pin: str | None, lock_after: float) -> None:
        self.pin = pin
        self.lock_after = float(lock_after)
        self.check = check_words()
        self._signer: Any = None
        self._typed_at = 0.0
        self._was_unlocked = False  # as ``due`` last saw it
        self.backoff = Backoff()  # wrong passphrases in any of this dashboard's prompts (a new prompt does not reset it)

    def signer_now(self, now: float | None = None) -> Any:
        """The key unlocked by the last passphrase, or None (never, locked, or its time passed)."""
        if self._signer is not None and (now or time.monotonic()) - self._typed_at >= self.lock_after:
            self.lock()
        return self._signer

    def needs_passphrase(self, verdict: str) -> bool:
        return self.pin is not None and (verdict in FRESH or self.signer_now() is None)

    def typed(self, signer: Any) -> None:
        """The passphrase was just typed and unlocked ``signer``: kept for rejections and answers."""
        self._signer = signer
        self._typed_at = time.monotonic()
        self._was_unlocked = True

    def lock(self) -> bool:
        """Drop the unlocked key; True when there was one."""
        had = self._signer is not None
        self._signer = None
        self._typed_at = 0.0
        return had

    def due(self) -> bool:
        """True once, at the first call after the kept key locked (its time ran out, whoever noticed first)."""
        unlocked = self.signer_now() is not None
        was, self._was_unlocked = self._was_unlocked, unlocked
        return was and not unlocked

    def seconds_left(self) -> int:
        if self.signer_now() is None:
            return 0
        return max(0, int(self.lock_after - (time.monotonic() - self._typed_at)))

    def trust_line(self, short: str) -> str:
        if self.pin is None:
            return "unverified decisions: ars supervisor init"
        state = f"signing as {short}" if self.signer_now() is not None else f"key {short} locked"
        return f"{state} · check: {self.check}"
