"""The event log kept across runs: each notice and decision the dashboard
shows is one JSON line in ``<state>/dashboard-events.jsonl``, and a new
dashboard starts with the last ones, so what happened while it was closed or
in another dashboard's run can still be read (``l``).

Appends are one ``write`` of one line with ``O_APPEND`` (two dashboards on one
state directory interleave whole lines); the file starts again past
``MAX_BYTES`` (the previous one kept as ``.1``). A line that cannot be read is
skipped: the journal is a convenience, never a reason not to start.
"""

from __future__ import annotations

import json
import os
from collections import deque
from datetime import datetime
from pathlib import Path

from tui.widgets.event_log import Event

FILE = "dashboard-events.jsonl"
MAX_BYTES = 1 << 20


def append(state_dir: Path, event: Event) -> None:
    path = Path(state_dir) / FILE
    line = json.dumps({"ts": event.ts.isoformat(), "severity": event.severity, "title": event.title,
                       "message": event.message}, ensure_ascii=False) + "\n"
    try:
        if path.exists() and path.stat().st_size > MAX_BYTES:
            os.replace(path, path.with_name(FILE + ".1"))
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)
    except OSError:
        pass  # a read-only or full state directory: this run's log still has it


def load(state_dir: Path, n: int) -> list[Event]:
    """The last ``n`` events written by earlier runs (and other dashboards), oldest first."""
    kept: deque[Event] = deque(maxlen=n)
    for name in (FILE + ".1", FILE):
        try:
            with open(Path(state_dir) / name, encoding="utf-8", errors="replace") as fh:
                for raw in fh:
                    try:
                        d = json.loads(raw)
                        kept.append(Event(datetime.fromisoformat(d["ts"]), str(d["severity"]), str(d["title"]),
                                          str(d["message"])))
                    except (ValueError, KeyError, TypeError):
                        continue
        except OSError:
            continue
    return list(kept)
