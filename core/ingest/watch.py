"""``ars ingest --watch``: follow folders, ingest what changes, finalise idle sessions.

A session file that keeps growing is re-ingested incrementally (only episodes
whose content changed are written). When a file has been quiet for
``idle_seconds`` its session is finalised: a ``session.finalized`` ledger
event records which episodes it ended with, so consumers (enrichment, the
dashboard) know the session is closed.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Callable, Iterable

from core.events import SESSION_FINALIZED_EVENT
from core.ledger.ledger import Event, content_id
from core.memory.memory import Memory
from core.ingest.pipeline import INGESTIBLE, IngestReport, ingest
from core.ingest.stores.discover import find_stores


class Watcher:
    def __init__(self, memory: Memory, paths: Iterable[str | Path], fmt: str = "auto",
                 idle_seconds: float = 300.0, on_report: Callable[[IngestReport], None] | None = None,
                 on_finalized: Callable[[Path], None] | None = None):
        self.memory = memory
        self.paths = [Path(p) for p in paths]
        self.fmt = fmt
        self.idle_seconds = idle_seconds
        self.on_report = on_report
        self.on_finalized = on_finalized
        self.stop_event = threading.Event()
        self._active: dict[Path, float] = {}  # file -> last change (monotonic)

    def initial(self) -> IngestReport:
        report = ingest(self.memory, self.paths, fmt=self.fmt)
        if self.on_report:
            self.on_report(report)
        return report

    def run(self) -> None:
        """Block until ``stop_event`` is set (or Ctrl-C)."""
        from watchfiles import watch

        self.initial()
        roots = [p for p in self.paths if p.exists()]
        stores, _ = find_stores(self.paths)  # agents' databases: a write to one (its -wal) re-reads that store
        # a store found from a folder beside it (an agent's sessions/ folder) is watched where it lives
        roots += [d for d in {u.path.parent if u.kind == "hermes" else u.path for u in stores}
                  if d.exists() and not any(_belongs(d, r) for r in roots)]
        for changes in watch(*roots, stop_event=self.stop_event, yield_on_timeout=True,
                             rust_timeout=int(min(self.idle_seconds, 1.0) * 1000) or 200):
            changed = sorted({Path(p) for _, p in changes if Path(p).suffix in INGESTIBLE and Path(p).is_file()})
            touched = sorted({u.path for u in stores for _, p in changes if _belongs(Path(p), u.path)})
            changed = [p for p in changed if not any(_belongs(p, s) for s in touched)] + touched
            now = time.monotonic()
            if changed:
                # the files are named one by one, but they were found in the watched
                # folders: a symlink out of one is skipped, as in the first walk
                folders = [p for p in self.paths if p.is_dir()]
                report = ingest(self.memory, changed, fmt=self.fmt, roots=folders)
                for p in changed:
                    if p not in touched:  # a store's sessions are not files to finalise
                        self._active[p] = now
                if self.on_report:
                    self.on_report(report)
            self._finalize_idle(now)

    def _finalize_idle(self, now: float) -> None:
        for path, last in list(self._active.items()):
            if now - last < self.idle_seconds:
                continue
            del self._active[path]
            entry = self.memory.files.registry.files().get(str(path.resolve()))
            episode_ids = sorted({s[2] for s in entry.spans}) if entry else []
            data = {"path": str(path.resolve()), "episodes": episode_ids}
            self.memory.ledger.append([Event(content_id("fin", data), SESSION_FINALIZED_EVENT, data)])
            if self.on_finalized:
                self.on_finalized(path)


def _belongs(path: Path, store: Path) -> bool:
    """``path`` is ``store`` (a Hermes state.db), one of its -wal/-shm files, or under it (an OpenClaw agent)."""
    for p, s in ((path, store), (path.resolve(), store.resolve())):
        if p == s or p.is_relative_to(s) or (p.parent == s.parent and p.name.startswith(s.name + "-")):
            return True
    return False
