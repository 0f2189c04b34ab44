"""What a state directory holds: ``empty``, ``demo`` (seeded by ``ars demo``) or ``other``.

The demo seeds only an empty directory (tui/demo.py), and the dashboard offers to seed
one that is empty: both ask here. A directory holding only an empty store
(``memory.sqlite`` with no episodes, as any read command such as ``ars loop list``
leaves behind, and empty lock or ledger files) counts as empty: there is nothing in it
to mix with.
"""

from __future__ import annotations

from pathlib import Path

from core.infra.sqlite_lib import sqlite3
from core.ledger.ledger import LEDGER

MARKER = "demo.json"  # what a seeded directory holds


# what opening a state directory leaves in an empty one (no data): the SQLite store
# and its journal files, lock files, an empty ledger
# what a read command leaves in an empty directory: the store it opened and the
# directory's team binding (core/team/identity.py), neither holding anything yet
STORE_FILES = {"memory.sqlite", "memory.sqlite-wal", "memory.sqlite-shm", "memory.sqlite-journal", "team.json"}
EMPTY_FILES = {".gitkeep", ".writer.lock", ".ledger.lock"}


def state_kind(state_dir: Path) -> str:
    """``empty`` (missing, empty, or only an empty store), ``demo`` (seeded
    before) or ``other``."""
    state_dir = Path(state_dir)
    if not state_dir.exists():
        return "empty"
    if not state_dir.is_dir():
        return "other"
    if (state_dir / MARKER).is_file():
        return "demo"
    names = {p.name for p in state_dir.iterdir()} - EMPTY_FILES
    if not names:
        return "empty"
    if LEDGER in names and _size(state_dir / LEDGER) == 0:
        names.discard(LEDGER)
    if names <= STORE_FILES and "memory.sqlite" in names and _empty_store(state_dir / "memory.sqlite"):
        return "empty"
    return "other"


def _size(path: Path) -> int:
    try:
        return path.stat().st_size if path.is_file() else -1
    except OSError:
        return -1


def _empty_store(db: Path) -> bool:
    """A SQLite store that holds no episode (read only; any doubt is "not empty")."""
    if not db.is_file():
        return False
    try:
        con = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error:
        return False
    try:
        return con.execute("SELECT count(*) FROM episodes").fetchone()[0] == 0
    except sqlite3.Error:
        return False
    finally:
        con.close()
