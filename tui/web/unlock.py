"""Browser sessions of the approvals page: the per-page CSRF token, the supervisor's
key unlocked for a while in this process's memory, and each page's own back-off.

A session is a random id in an HttpOnly, SameSite=Strict cookie, known only to
the browser that loaded the page and to this process (never written to disk).
The access token lets a browser see the inbox; deciding needs the passphrase,
typed into the page and used here to unlock the key, then dropped. Every approval
needs it typed; when the person asks for it, the unlocked key stays with *that*
session for rejections and answers until ``ARS_KEY_LOCK_AFTER`` seconds after it
was typed (a fresh page from the same token, e.g. an agent that read the token
file, gets a new session with nothing unlocked).

Wrong passphrases back off *the page that typed them* (1, 2, 4 ... 300 s; tui/passphrase_backoff.py): another
page's guesses (an agent holding the token) never make the supervisor's page wait.
So that guesses cannot be spread over ever-new pages, new sessions are rationed
(``NEW_PER_MINUTE``; pages already open keep working) and at most ``MAX_SESSIONS``
live, the one seen longest ago evicted first, a page that never unlocked the key
before one that did. The agent can copy key.enc and guess offline at the KDF's
pace anyway (core/inbox/key_file.py); this keeps the page from being a faster
oracle than that, or a way to lock the supervisor out.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from tui.passphrase_backoff import Backoff

SESSION_COOKIE = "ars_serve_session"
UNLOCK_TTL = 300.0  # default seconds the key stays unlocked for one page after its passphrase (ARS_KEY_LOCK_AFTER)
SESSION_TTL = 12 * 3600.0  # a page left open this long loads again
MAX_SESSIONS = 32
NEW_PER_MINUTE = 8  # new page sessions a minute, for every client together


@dataclass
class Session:
    id: str
    csrf: str
    created: float = field(default_factory=time.monotonic)
    seen: float = field(default_factory=time.monotonic)
    signer: Any = None
    unlocked_until: float = 0.0
    backoff: Backoff = field(default_factory=Backoff)
    proven: bool = False  # its passphrase unlocked the key once: the supervisor's page

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
        self._made: deque[float] = deque()  # when the sessions of the last minute were made

    def get(self, session_id: str | None) -> Session | None:
        s = self._by_id.get(session_id or "")
        if s is None:
            return None
        now = time.monotonic()
        if now - s.created > SESSION_TTL:
            s.lock()
            self._by_id.pop(s.id, None)
            return None
        s.seen = now
        return s

    def wait_for_new(self) -> float:
        """Seconds until a new session may be made (0: now)."""
        now = time.monotonic()
        while self._made and now - self._made[0] >= 60.0:
            self._made.popleft()
        return 0.0 if len(self._made) < NEW_PER_MINUTE else 60.0 - (now - self._made[0])

    def new(self) -> Session:
        """A new session (the caller checked ``wait_for_new``); the stalest goes when full."""
        if len(self._by_id) >= MAX_SESSIONS:
            # a page that never unlocked the key goes before one that did; then the one seen longest ago
            stale = min(self._by_id.values(), key=lambda s: (s.proven, s.seen))
            stale.lock()
            self._by_id.pop(stale.id, None)
        self._made.append(time.monotonic())
        s = Session(id=secrets.token_urlsafe(32), csrf=secrets.token_urlsafe(32))
        self._by_id[s.id] = s
        return s

    def __len__(self) -> int:
        return len(self._by_id)

    @staticmethod
    def csrf_ok(session: Session | None, given: str | None) -> bool:
        if session is None or not given:
            return False
        return hmac.compare_digest(given.encode("utf-8", "replace"), session.csrf.encode("utf-8"))
