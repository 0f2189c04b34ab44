"""Find agents' stores under the paths given to ``ars ingest``; say why other files are not read.

A store is read as one unit (``run.py``), and every file it owns (the database,
its ``-wal``/``-shm``, its archives) is left out of the file walk, so it is
neither read twice nor reported as an unsupported file.

* OpenClaw: ``agents/<id>/agent/openclaw-agent.sqlite``, found under an OpenClaw
  home, an ``agents`` folder, an agent's folder, its ``sessions`` folder (the
  README's first example) or named directly. An agent without the database (an
  install older than 2026.8) has only ``sessions/*.jsonl``: those stay files.
* Hermes: a ``state.db`` (or any SQLite file named directly) with Hermes'
  ``sessions`` and ``messages`` tables.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from .hermes_db import is_state_db
from .openclaw_db import DB_NAME, OpenClawAgent
from .sqlite_ro import is_sqlite, tables_of

SQLITE_SIDECARS = ("-wal", "-shm", "-journal")
_SKIP_DIRS = {".git", "node_modules", "__pycache__", ".venv"}


@dataclass
class StoreUnit:
    kind: str  # "openclaw" | "hermes"
    path: Path  # OpenClaw: the agent's folder; Hermes: the state.db
    owned: list[Path] = field(default_factory=list)

    @property
    def key(self) -> str:
        return str(Path(os.path.realpath(self.path)))

    @property
    def shown(self) -> Path:
        return OpenClawAgent(self.path).db if self.kind == "openclaw" else self.path


def _agent_root(db: Path) -> Path:
    """``agents/<id>/agent/openclaw-agent.sqlite`` -> ``agents/<id>``; elsewhere its folder."""
    return db.parent.parent if db.parent.name == "agent" else db.parent


def _openclaw(db: Path) -> StoreUnit:
    agent = OpenClawAgent(_agent_root(db))
    return StoreUnit("openclaw", agent.root, agent.owned())


def _hermes(db: Path) -> StoreUnit:
    return StoreUnit("hermes", db, [p for p in (Path(f"{db}{s}") for s in ("", *SQLITE_SIDECARS)) if p.exists()])


def _store_at(path: Path) -> StoreUnit | None:
    """The store ``path`` (a file) is, or belongs to."""
    for sfx in SQLITE_SIDECARS:
        if path.name.endswith(sfx):
            path = path.with_name(path.name[: -len(sfx)])
    if path.name == DB_NAME and path.is_file():
        return _openclaw(path)
    if path.is_file() and is_sqlite(path) and is_state_db(tables_of(path)):
        return _hermes(path)
    return None


def _in_folder(folder: Path) -> list[StoreUnit]:
    out: list[StoreUnit] = []
    if folder.name == "sessions" and (folder.parent / "agent" / DB_NAME).is_file():
        return [_openclaw(folder.parent / "agent" / DB_NAME)]  # an agent's sessions folder: its store is next door
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        dirnames[:] = [d for d in dirnames if d not in _SKIP_DIRS and d != "cold"]
        for name in filenames:
            if name == DB_NAME or name.endswith((".db", ".sqlite", ".sqlite3")):
                unit = _store_at(Path(dirpath, name))
                if unit is not None:
                    out.append(unit)
    return out


def find_stores(paths: Iterable[str | Path]) -> tuple[list[StoreUnit], set[str]]:
    """The stores under ``paths`` (each once), and the real paths of every file they own."""
    units: dict[str, StoreUnit] = {}
    for p in map(Path, paths):
        try:
            found = _in_folder(p) if p.is_dir() else [u for u in [_store_at(p)] if u is not None]
        except OSError:
            continue  # the file walk reports what cannot be read
        for unit in found:
            units.setdefault(unit.key, unit)
    owned = {os.path.realpath(f) for u in units.values() for f in u.owned}
    return list(units.values()), owned


def is_legacy_archive(name: str) -> bool:
    """OpenClaw's ``<id>.jsonl.reset.<ts>`` / ``<id>.jsonl.deleted.<ts>`` (a reset or deleted session's transcript)."""
    return ".jsonl.reset." in name or ".jsonl.deleted." in name


def unsupported_reason(path: Path) -> str:
    """Why a file found in a folder is not read (one line, for ``--json`` and the exit-1 line)."""
    name = path.name
    for sfx in SQLITE_SIDECARS:
        if name.endswith(sfx):
            return f"SQLite's {sfx[1:]} file of {name[: -len(sfx)]} (read with its database)"
    if name == DB_NAME:
        return ("an OpenClaw 2026.8+ store outside agents/<id>/agent/; ars reads it when given "
                "the OpenClaw home (ars ingest ~/.openclaw)")
    if name == "sessions.json":
        return "OpenClaw's session index (names and settings, no transcript)"
    if name.endswith(".jsonl.zst"):
        return "a zstd JSONL archive outside an OpenClaw agent's sessions/cold/ folder"
    if is_sqlite(path):
        tables = sorted(tables_of(path))
        shown = ", ".join(tables[:6]) + (", …" if len(tables) > 6 else "")
        return f"a SQLite database that is neither an OpenClaw nor a Hermes store (tables: {shown or 'none readable'})"
    suffix = path.suffix or "no extension"
    return f"not a supported format ({suffix}): ars reads .jsonl transcripts, .md notes, OpenClaw and Hermes stores"
