"""What has been forgotten: the tombstone events and the small files derived from them.

The source of truth is the ledger: a ``memory.forget`` event (the tombstone)
names the forgotten episode ids, sessions and raw source files. Two files
beside it let every reader check cheaply without reading the ledger:

* ``forgotten.json``: the union of every tombstone (ids, sessions, sources),
  read by recall (a last filter over every tier's answer), the files tier
  (forgotten sources are never scanned, forgotten spans never returned),
  the write path (an episode id or session forgotten is never stored again)
  and the pull (a pulled copy of a forgotten episode is never stored);
* ``forget.pending``: the forget in progress (its whole tombstone event).
  Written before anything is changed and removed when every file is done;
  any command that opens the state finds it and finishes the forget (a
  SIGKILL at any point never leaves a half-forgotten memory).

Both hold ids and paths, never an episode's text.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from core.events import FORGET_EVENT
from core.infra.fsutil import atomic_write

FORGOTTEN_FILE = "forgotten.json"
PENDING_FILE = "forget.pending"
PLACEHOLDER = "[forgotten]"


@dataclass
class Forgotten:
    """The union of the tombstones: what no reader may return and no writer may store."""

    ids: set[str] = field(default_factory=set)
    sessions: set[str] = field(default_factory=set)
    sources: set[str] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.ids or self.sessions or self.sources)

    def add(self, data: dict[str, Any]) -> None:
        self.ids.update(str(x) for x in data.get("ids") or ())
        self.sessions.update(str(x) for x in data.get("sessions") or ())
        self.sources.update(str(x) for x in data.get("sources") or ())

    def covers(self, episode_id: str, session_id: str = "") -> bool:
        return episode_id in self.ids or bool(session_id and session_id in self.sessions)

    def to_json(self) -> str:
        return json.dumps({"ids": sorted(self.ids), "sessions": sorted(self.sessions),
                           "sources": sorted(self.sources)}, ensure_ascii=False)


_cache: dict[str, tuple[tuple[int, int, int, int], Forgotten]] = {}
_cache_lock = threading.Lock()


def _stamp(path: Path) -> tuple[int, int]:
    try:
        st = path.stat()
        return st.st_mtime_ns, st.st_size
    except OSError:
        return 0, -1


def load(state_dir: Path) -> Forgotten:
    """``forgotten.json`` plus a pending forget's selection (cached by mtime and
    size: recall calls this on every answer, and it is usually absent)."""
    state_dir = Path(state_dir)
    f, p = state_dir / FORGOTTEN_FILE, state_dir / PENDING_FILE
    key = (*_stamp(f), *_stamp(p))
    with _cache_lock:
        hit = _cache.get(str(state_dir))
        if hit is not None and hit[0] == key:
            return hit[1]
    out = Forgotten()
    if key[1] >= 0:
        try:
            out.add(json.loads(f.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            pass  # unreadable: the pending file and the stores still hold what matters
    pending = read_pending(state_dir)
    if pending is not None:
        out.add(pending.get("data") or {})
    with _cache_lock:
        _cache[str(state_dir)] = (key, out)
    return out


def save(state_dir: Path, forgotten: Forgotten) -> None:
    atomic_write(Path(state_dir) / FORGOTTEN_FILE, forgotten.to_json())


def merge(state_dir: Path, data: dict[str, Any]) -> Forgotten:
    """Add one tombstone's selection to ``forgotten.json`` (idempotent)."""
    cur = Forgotten()
    try:
        cur.add(json.loads((Path(state_dir) / FORGOTTEN_FILE).read_text(encoding="utf-8")))
    except FileNotFoundError:
        pass
    except ValueError:
        pass  # a damaged file is rebuilt from the ledger by `ars rebuild`; this tombstone goes in now
    cur.add(data)
    save(state_dir, cur)
    return cur


def from_ledger(entries: Iterable[Any]) -> Forgotten:
    """Every tombstone in a ledger read (``ars rebuild`` regenerates forgotten.json)."""
    out = Forgotten()
    for e in entries:
        if e.type == FORGET_EVENT:
            out.add(e.data)
    return out


# -- the forget in progress ----------------------------------------------------------------
def write_pending(state_dir: Path, event_line: dict[str, Any]) -> None:
    atomic_write(Path(state_dir) / PENDING_FILE, json.dumps(event_line, ensure_ascii=False))


def read_pending(state_dir: Path) -> dict[str, Any] | None:
    path = Path(state_dir) / PENDING_FILE
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return None  # written atomically: a damaged one was never a forget that started
    return d if isinstance(d, dict) and d.get("event_id") else None


def clear_pending(state_dir: Path) -> None:
    try:
        os.unlink(Path(state_dir) / PENDING_FILE)
    except FileNotFoundError:
        pass
