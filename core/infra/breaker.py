"""A circuit breaker, so an outage costs milliseconds instead of timeouts.

Closed: calls go through. A hard failure (the backend refused or dropped the
connection) opens it at once; soft failures (a slow answer past its deadline)
open it after ``soft_limit`` in a row, so one cold query plan does not take
Neo4j out of recall for a whole cooldown. Open: calls fail at once for
``cooldown`` seconds. Then exactly one probe goes through (half-open); its
success closes the breaker, its failure opens it again.

With a ``probe`` function the probe runs in the background instead of inside
a caller's call: a server that has just restarted answers its first queries
slowly (cold plans, an unwarmed JVM), and a caller with a 250 ms deadline
would fail the probe every time and keep the breaker open for ever.
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
    def __init__(self, cooldown: float = 5.0, soft_limit: int = 2, clock=time.monotonic, probe=None):
        self.cooldown = cooldown
        self.probe = probe
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
                self._probing = True
                if self.probe is None:
                    return  # this caller is the probe
                threading.Thread(target=self._run_probe, name="breaker-probe", daemon=True).start()
                raise CircuitOpen(f"circuit open after: {self.last_error} (probing in the background)")
            if self._probing:
                raise CircuitOpen(f"circuit open after: {self.last_error} (probe running)")
            raise CircuitOpen(f"circuit open after: {self.last_error} (next probe in {max(0.0, self.cooldown - waited):.1f}s)")

    def _run_probe(self) -> None:
        try:
            self.probe()
        except Exception as exc:  # noqa: BLE001 - a failed probe re-opens the breaker
            self.failure(f"probe failed: {' '.join(str(exc).split())[:160]}")
        else:
            self.success()

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

    def troubled(self) -> bool:
        """Whether the last calls failed (open, or soft timeouts not yet enough to open it)."""
        with self._lock:
            return self._opened_at is not None or self._soft > 0

    def snapshot(self) -> BreakerState:
        with self._lock:
            if self._opened_at is None:
                return BreakerState("closed", self.failures, self.last_error, 0.0)
            state = "half_open" if self._probing else "open"
            return BreakerState(state, self.failures, self.last_error, self._clock() - self._opened_at)
