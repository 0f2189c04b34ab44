"""What a pull refused of each other host, said once per host and counted.

A forged episode or tombstone is refused where it is met (core/team/verify.py,
core/govern/trusted.py); this module gathers them per host so a pull reports
one line per host, however many rows it refused, and keeps the counts for
``ars sync status`` in ``team-refused.json``: episodes refused (those the pull
cursor went past, summed over pulls, each counted once; plus those after the
last episode taken, which the next pull reads again) and tombstones not
obeyed (the last pull's: the pull reads every tombstone each time).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from core.infra.fsutil import atomic_write, read_regular

REFUSED_FILE = "team-refused.json"


@dataclass
class _Host:
    passed: set[tuple[str, int]] = field(default_factory=set)  # (id, seq) refused, and the cursor went past them
    pending: set[tuple[str, int]] = field(default_factory=set)  # refused after the cursor: read again next pull
    saved: set[tuple[str, int]] = field(default_factory=set)  # of ``passed``, those already added to the file
    tombstone_ids: set[str] = field(default_factory=set)
    why: list[str] = field(default_factory=list)  # distinct reasons, first seen first
    note: str = ""  # about its declared keys (core/team/pins.py)

    @property
    def tombstones(self) -> int:
        return len(self.tombstone_ids)

    @property
    def episodes(self) -> int:
        return len(self.passed | self.pending)


class Refusals:
    """One sync run's refusals, per host (a run's pull turns share one)."""

    def __init__(self) -> None:
        self.hosts: dict[str, _Host] = {}

    def _of(self, host: str) -> _Host:
        return self.hosts.setdefault(host, _Host())

    def episode(self, host: str, key: tuple[str, int], why: str, passed: bool) -> None:
        """One episode refused; ``passed``: the pull cursor went past it (it is not read
        again), else it comes after the last one taken and the next pull reads it again
        (a forged one with a far seq must not move the cursor past the host's next ones)."""
        h = self._of(host)
        if passed:
            h.passed.add(key)
            h.pending.discard(key)
        elif key not in h.passed:
            h.pending.add(key)
        if why not in h.why:
            h.why.append(why)

    def tombstone(self, host: str, episode_id: str, why: str) -> None:
        """One tombstone not obeyed (each turn of a run reads them all: counted once)."""
        h = self._of(host)
        h.tombstone_ids.add(episode_id)
        if why not in h.why:
            h.why.append(why)

    def note(self, host: str, line: str) -> None:
        self._of(host).note = line

    def lines(self) -> list[str]:
        """One line per host."""
        out = []
        for host, h in sorted(self.hosts.items()):
            what = " and ".join(x for x in (_n(h.episodes, "episode") + " refused" if h.episodes else "",
                                            _n(h.tombstones, "tombstone") + " not obeyed" if h.tombstones else "")
                                if x)
            why = "; ".join(h.why[:2]) + (f" (+{len(h.why) - 2} more reasons)" if len(h.why) > 2 else "")
            if what:
                out.append(f"host {host}: {what}: {why}" + (f"; {h.note}" if h.note and h.note not in h.why else ""))
            elif h.note:
                out.append(f"host {host}: {h.note}")
        return out

    def save(self, state: Path) -> None:
        """Add this pull's counts to ``team-refused.json``: episodes the cursor passed
        summed over pulls, those it will read again and tombstones as this pull found them."""
        old = load(state)
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        new: dict[str, Any] = {}
        for host in sorted(set(old) | set(self.hosts)):
            was, h = old.get(host) or {}, self.hosts.get(host)
            passed = int(was.get("passed") or 0) + (len(h.passed - h.saved) if h else 0)
            pending = len(h.pending - h.passed) if h else 0
            row = {"episodes": passed + pending, "passed": passed, "pending": pending,
                   "tombstones": h.tombstones if h else 0,
                   "why": (h.why[0] if h and h.why else was.get("why", "")),
                   "note": h.note if h else "", "at": now if h and (h.episodes or h.tombstones) else was.get("at", "")}
            if row["episodes"] or row["tombstones"] or row["note"]:
                new[host] = row
        if new != old:
            atomic_write(Path(state) / REFUSED_FILE, json.dumps(new, indent=1))
        for h in self.hosts.values():
            h.saved |= h.passed


def _n(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def load(state: Path) -> dict[str, dict[str, Any]]:
    """host -> {episodes, tombstones, why, note, at}: what the pulls refused of it."""
    try:
        data = json.loads(read_regular(Path(state) / REFUSED_FILE, 1 << 20))
    except (OSError, ValueError):
        return {}
    return {str(k): v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}
