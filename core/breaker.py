"""A circuit breaker, so an outage costs milliseconds instead of timeouts.

Closed: calls go through. A hard failure (the backend refused or dropped the
connection) opens it at once; soft failures (a slow answer past its deadline)
open it after ``soft_limit`` in a row, so one cold query plan does not take
Neo4j out of recall for a whole cooldown. Open: calls fail at once for
``cooldown`` seconds. Then exactly one probe goes through (half-open); its
success closes the breaker, its failure opens it again.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass


@dataclass
class BreakerState:
    state: str  # closed | open | half_open
    failures: int
    last_error: str
    opened_for_s: float


class CircuitOpen(Exception):
    """Raised instead of calling a backend that recently failed."""


class CircuitBreaker:
    def __init__(self, cooldown: float = 5.0, soft_limit: int = 2, clock=time.monotonic):
        self.cooldown = cooldown
        self.soft_limit = soft_limit
        self._soft = 0
        self._clock = clock
        self._lock = threading.Lock()
        self._opened_at: float | None = None
        self._probing = False
        self.failures = 0
        self.last_error = ""

    def before_call(self) -> None:
        """Raise ``CircuitOpen`` unless this call may go to the backend."""
        with self._lock:
            if self._opened_at is None:
                return
            waited = self._clock() - self._opened_at
            if waited >= self.cooldown and not self._probing:
                self._probing = True  # this caller is the probe
                return
            raise CircuitOpen(f"circuit open after: {self.last_error} (next probe in {max(0.0, self.cooldown - waited):.1f}s)")

    def success(self) -> None:
        with self._lock:
            self._opened_at = None
            self._probing = False
            self.failures = 0
            self._soft = 0

    def failure(self, error: str, hard: bool = True) -> None:
        with self._lock:
            self._soft = 0 if hard else self._soft + 1
            if not hard and self._soft < self.soft_limit and not self._probing:
                self.last_error = error
                return
            self._opened_at = self._clock()
            self._probing = False
            self.failures += 1
            self.last_error = error

    def snapshot(self) -> BreakerState:
        with self._lock:
            if self._opened_at is None:
                return BreakerState("closed", self.failures, self.last_error, 0.0)
            state = "half_open" if self._probing else "open"
            return BreakerState(state, self.failures, self.last_error, self._clock() - self._opened_at)
