"""The protocol every recall tier implements, and the small helpers they share.

A tier never raises into recall: ``guarded`` turns any failure into a
``TierReport`` status with a one-line error.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Protocol

from core.models import TierReport
from core.memory.scoring import Query


class DeadlineExceeded(Exception):
    """A tier ran past its deadline (a ``time.monotonic()`` instant)."""


@dataclass
class Lookup:
    """What a tier knows about one episode for one query (for ``explain``)."""

    stored: bool
    raw_score: float | None = None
    rank: int | None = None  # rank among everything the tier matched
    matched_terms: list[str] | None = None
    candidates: int = 0
    breakdown: dict[str, float] | None = None  # the score's components (scoring.py), context among them
    verdict: str | None = None  # the tier's own sentence when it has one (dense: "not embedded yet")


class Tier(Protocol):
    name: str

    def search(self, q: Query, k: int, deadline: float) -> TierReport: ...

    def lookup(self, q: Query, episode_id: str, deadline: float) -> Lookup: ...

    def health(self) -> TierReport: ...


# what a tier reports when ARS_EMBEDDER=off removes the dense tier (recall and the tier say it alike)
DENSE_OFF = "off (ARS_EMBEDDER=off)"


def one_line(exc: BaseException) -> str:
    """An exception as one line without secrets (URIs keep host and port only)."""
    msg = " ".join(str(exc).split()) or exc.__class__.__name__
    if len(msg) > 200:
        msg = msg[:197] + "..."
    return f"{exc.__class__.__name__}: {msg}"


def guarded(tier: str, fn: Callable[[], TierReport], down_types: tuple[type[BaseException], ...] = ()) -> TierReport:
    """Run a tier call; failures become a status, never an exception."""
    t0 = time.perf_counter()
    try:
        report = fn()
    except DeadlineExceeded as exc:
        return TierReport(tier=tier, status="timeout", error=one_line(exc),
                          latency_ms=(time.perf_counter() - t0) * 1000)
    except down_types as exc:
        return TierReport(tier=tier, status="down", error=one_line(exc),
                          latency_ms=(time.perf_counter() - t0) * 1000)
    except Exception as exc:  # noqa: BLE001 - isolation is the point
        return TierReport(tier=tier, status="error", error=one_line(exc),
                          latency_ms=(time.perf_counter() - t0) * 1000)
    report.latency_ms = (time.perf_counter() - t0) * 1000
    return report
