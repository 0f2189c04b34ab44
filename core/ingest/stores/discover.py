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
from pathlib import Path
from typing import Any, Iterable

from core.ingest.formats.parsed import shown
from core.ingest.stores.layout import DB_NAME, SQLITE_SIDECARS, StoreUnit, find_stores
from core.ingest.stores.sqlite_ro import is_sqlite, tables_of

__all__ = ["StoreUnit", "find_stores", "is_legacy_archive", "not_a_transcript", "nothing_readable",
           "unsupported_reason"]

def is_legacy_archive(name: str) -> bool:
    """OpenClaw's ``<id>.jsonl.reset.<ts>`` / ``<id>.jsonl.deleted.<ts>`` (a reset or deleted session's
    transcript), uncompressed: a zstd one (2026.8+) is read with its agent's store."""
    return (".jsonl.reset." in name or ".jsonl.deleted." in name) and not name.endswith(".zst")


def not_a_transcript(name: str) -> bool:
    """A ``.jsonl`` OpenClaw writes beside its transcripts that is none (its runtime trajectory)."""
    return name.endswith(".trajectory.jsonl")


def unsupported_reason(path: Path) -> str:
    """Why a file found in a folder is not read (one line, for ``--json`` and the exit-1 line)."""
    name = path.name
    for sfx in SQLITE_SIDECARS:
        if name.endswith(sfx):
            return f"SQLite's {sfx[1:]} file of {name[: -len(sfx)]} (read with its database)"
    if name == DB_NAME:
        return ("an OpenClaw 2026.8+ store outside agents/<id>/agent/; ars reads it when given "
                "the OpenClaw home (ars ingest ~/.openclaw)")
    if name in ("openclaw.sqlite", "openclaw-quarantine.sqlite") or name.startswith("gateway.") and name.endswith(".sqlite"):
        return "OpenClaw's shared state or a gateway lock (configuration, approvals, leases; no transcripts)"
    if path.parent.name == "session-sqlite-migration-runs":
        return "an OpenClaw session-migration manifest (which files the import moved; no transcripts)"
    if not_a_transcript(name):
        return "OpenClaw's runtime trajectory (timings and tool events beside a transcript), not a transcript"
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


def _under(path: str, root: str) -> bool:
    return os.path.realpath(path).startswith(root + os.sep)


def nothing_readable(paths: Iterable[str | Path], units: list[StoreUnit], per_file: list[Any],
                     unsupported: list[Any]) -> list[str]:
    """One line per named folder that held files and none ars can read (the CLI exits 1 on them)."""
    lines = []
    for p in map(Path, paths):
        if not p.is_dir():
            continue
        root = os.path.realpath(p)
        if any(_under(u.key, root) or root == u.key or _under(root, u.key) for u in units):
            continue
        read = [f for f in per_file if f.status != "skipped" and _under(f.file, root)]
        found = [u for u in unsupported if _under(u.file, root)]
        if read or not found:
            continue
        named = "; ".join(f"{Path(u.file).name} ({u.reason})" for u in found[:3])
        more = f"; and {len(found) - 3} more" if len(found) > 3 else ""
        lines.append(f"{shown(p)}: {len(found)} file{'s' if len(found) != 1 else ''}, none in a supported format: "
                     f"{named}{more}")
    return lines
