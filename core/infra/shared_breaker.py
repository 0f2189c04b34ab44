"""Neo4j's circuit breaker, shared by the processes of one state directory.

The in-process breaker (``core/infra/breaker.py``) makes an outage cost
milliseconds in a long-lived process. But every CLI call and agent hook is a
fresh process with a fresh breaker: each one imported the driver (~300 ms),
then waited out the Neo4j deadline (a black-holed server) or a refused
connection, and the interpreter waited again for the connect timeout before
it could exit. So a process that finds Neo4j down records it in
``state/neo4j-breaker.json``; the next processes skip the tier (status
``down``, saying since when) without importing the driver, until the cooldown
has passed. Then the first process to look claims the probe (rewrites the
file with a new cooldown) and asks Neo4j; its success removes the file.

Timeouts are soft, as in-process: one slow answer (a cold plan) does not
open it; ``SOFT_LIMIT`` in a row do.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from core.infra.fsutil import atomic_write

FILE = "neo4j-breaker.json"
SOFT_LIMIT = 2


@dataclass
class Verdict:
    skip: bool  # do not ask Neo4j now
    reason: str = ""


class SharedBreaker:
    def __init__(self, state_dir: Path, cooldown: float):
        self.path = Path(state_dir) / FILE
        self.cooldown = cooldown

    def _read(self) -> dict:
        try:
            d = json.loads(self.path.read_text(encoding="utf-8"))
            return d if isinstance(d, dict) else {}
        except (OSError, ValueError):
            return {}

    def _write(self, d: dict) -> None:
        try:
            atomic_write(self.path, json.dumps(d))
        except OSError:
            pass  # a read-only state directory: each process finds out for itself

    def check(self) -> Verdict:
        """Whether this process should ask Neo4j; claims the probe when due."""
        d = self._read()
        if not d.get("open"):
            return Verdict(False)
        now = time.time()
        if now < float(d.get("until", 0)):
            ago = now - float(d.get("since", now))
            return Verdict(True, f"circuit open: Neo4j failed {ago:.0f} s ago ({d.get('error', '')}); "
                                 f"next probe in {float(d['until']) - now:.1f} s")
        d["until"] = now + self.cooldown  # this process is the probe; the others keep skipping
        self._write(d)
        return Verdict(False)

    def record(self, status: str, error: str = "") -> None:
        """The outcome of asking Neo4j: ``ok``/``empty`` close it, ``down``
        opens it, ``timeout`` opens it after ``SOFT_LIMIT`` in a row."""
        if status in ("ok", "empty"):
            if self.path.exists():
                try:
                    self.path.unlink()
                except OSError:
                    pass
            return
        if status not in ("down", "timeout"):
            return
        d = self._read()
        soft = int(d.get("soft", 0)) + 1 if status == "timeout" else SOFT_LIMIT
        now = time.time()
        if soft < SOFT_LIMIT:
            self._write({**d, "soft": soft})
            return
        since = float(d["since"]) if d.get("open") else now
        self._write({"open": True, "since": since, "until": now + self.cooldown, "soft": 0,
                     "error": " ".join(error.split())[:160]})
