"""Browser sessions of the approvals page: the per-page CSRF token, and the
supervisor's key unlocked for a while in this process's memory.

A session is a random id in an HttpOnly, SameSite=Strict cookie, known only to
the browser that loaded the page and to this process (never written to disk).
The access token lets a browser see the inbox; deciding needs the passphrase,
typed into the page and used here to unlock the key, then dropped. When the
person asks for it, the unlocked key stays with *that* session for
``UNLOCK_TTL`` seconds (a fresh page from the same token, e.g. an agent that read
the token file, gets a new session with nothing unlocked). Wrong passphrases
slow every session down (``Backoff``): the token file is readable by the agent,
so the passphrase is the one thing left to guess.
"""

from __future__ import annotations

import hmac
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

SESSION_COOKIE = "ars_serve_session"
UNLOCK_TTL = 600.0  # seconds the key stays unlocked for one page, when asked to
SESSION_TTL = 12 * 3600.0  # a page left open this long loads again
MAX_SESSIONS = 64
MAX_BACKOFF = 60.0


@dataclass
class Session:
    id: str
    csrf: str
    created: float = field(default_factory=time.monotonic)
    signer: Any = None
    unlocked_until: float = 0.0

    def signer_now(self, now: float | None = None) -> Any:
        """The key unlocked for this page, or None (never unlocked, locked, or its time ran out)."""
        if self.signer is not None and (now or time.monotonic()) >= self.unlocked_until:
            self.lock()
        return self.signer

    def keep(self, signer: Any, seconds: float = UNLOCK_TTL) -> None:
        self.signer = signer
        self.unlocked_until = time.monotonic() + seconds

    def lock(self) -> None:
        self.signer = None
        self.unlocked_until = 0.0

    def seconds_left(self) -> int:
        return max(0, int(self.unlocked_until - time.monotonic())) if self.signer_now() is not None else 0


class Sessions:
    def __init__(self) -> None:
        self._by_id: dict[str, Session] = {}

    def get(self, session_id: str | None) -> Session | None:
        s = self._by_id.get(session_id or "")
        if s is not None and time.monotonic() - s.created > SESSION_TTL:
            self._by_id.pop(s.id, None)
            return None
        return s

    def new(self) -> Session:
        if len(self._by_id) >= MAX_SESSIONS:  # the oldest goes first (an unlocked key with it)
            oldest = min(self._by_id.values(), key=lambda s: s.created)
            oldest.lock()
            self._by_id.pop(oldest.id, None)
        s = Session(id=secrets.token_urlsafe(32), csrf=secrets.token_urlsafe(32))
        self._by_id[s.id] = s
        return s

    @staticmethod
    def csrf_ok(session: Session | None, given: str | None) -> bool:
        if session is None or not given:
            return False
        return hmac.compare_digest(given.encode("utf-8", "replace"), session.csrf.encode("utf-8"))


class Backoff:
    """After a wrong passphrase the next try waits 1, 2, 4 ... up to 60 s (for every session)."""

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
