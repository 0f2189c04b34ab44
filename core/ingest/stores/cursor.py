"""What was read from each agent store, so a re-ingest reads only what is new.

One JSON file in ARS's state dir (``store_cursors.json``), keyed by the store's
resolved path: the file signature seen last (nothing to do when it is the same)
and a per-unit key (a session's last sequence number and row count, an archive's
hash). A unit is read again only when its key changed, and the cursor moves only
after the episodes read from it are durable in the ledger.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from core.infra.fsutil import atomic_write

CURSOR_FILE = "store_cursors.json"


def file_signature(*paths: Path) -> list[list[int]]:
    """Size and mtime of each path (``[]`` for one that does not exist)."""
    out: list[list[int]] = []
    for p in paths:
        try:
            st = os.stat(p)
            out.append([st.st_size, st.st_mtime_ns])
        except OSError:
            out.append([])
    return out


class StoreCursors:
    def __init__(self, state_dir: str | Path):
        self.path = Path(state_dir) / CURSOR_FILE
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        self._data: dict[str, dict[str, Any]] = data if isinstance(data, dict) else {}

    def get(self, store: str) -> dict[str, Any]:
        entry = self._data.get(store)
        return entry if isinstance(entry, dict) else {}

    def units(self, store: str) -> dict[str, Any]:
        units = self.get(store).get("units")
        return units if isinstance(units, dict) else {}

    def signature(self, store: str) -> Any:
        return self.get(store).get("signature")

    def save(self, store: str, signature: Any, units: dict[str, Any]) -> None:
        """Record what was read (call only once its episodes are durable)."""
        self._data[store] = {"signature": signature, "units": units}
        atomic_write(self.path, json.dumps(self._data, sort_keys=True))

    def forget(self, store: str) -> None:
        if self._data.pop(store, None) is not None:
            atomic_write(self.path, json.dumps(self._data, sort_keys=True))
