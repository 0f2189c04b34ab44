"""Where agents keep their stores, found without loading the parsers (a no-change
re-ingest answers from here and the cursor: tui/fast_ingest.py).

OpenClaw: ``agents/<id>/agent/openclaw-agent.sqlite``, found under an OpenClaw home,
an ``agents`` folder, an agent's folder, its ``sessions`` folder (the README's first
example) or named directly; an agent without the database (an install older than
2026.8) has only ``sessions/*.jsonl``, which stay plain files. Hermes: a ``state.db``
(or any SQLite file) with Hermes' ``sessions`` and ``messages`` tables.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from core.ingest.stores.sqlite_ro import is_sqlite, tables_of

DB_NAME = "openclaw-agent.sqlite"
IMPORT_ARCHIVE = "session-sqlite-import-archive"


# OpenClaw's transcript file names (dist/session-file-names: isPrimarySessionTranscriptFileName,
# isSessionArchiveArtifactName, COMPACTION_CHECKPOINT_TRANSCRIPT_RE, ARCHIVE_SUFFIX_RE); archives may be .zst
_ARCHIVE_RE = re.compile(r"\.jsonl\.(reset|deleted|bak)\.\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d{3})?Z"
                         r"(?:\.[0-9a-f]{32})?(?:\.zst)?$")
_CHECKPOINT_RE = re.compile(r"\.checkpoint\.[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
                            r"\.jsonl$", re.I)
_IMPORTED_RE = re.compile(r"\.imported-\d+(?:\.\d+)?$")


def transcript_kind(name: str) -> str | None:
    """``primary`` (a live transcript), ``archive`` (reset/deleted/backup, maybe zstd), ``checkpoint``
    (a compaction checkpoint copy), or None: not a transcript (trajectory, index, manifest...).
    A name the SQLite import moved aside (``<key>.<name>.imported-<ms>``) is judged by its original name."""
    name = _IMPORTED_RE.sub("", name)
    if name.endswith(".trajectory.jsonl") or name.startswith("sessions.json") or ".sessions.json" in name:
        return None
    if _ARCHIVE_RE.search(name):
        return "archive"
    if _CHECKPOINT_RE.search(name):
        return "checkpoint"
    return "primary" if name.endswith(".jsonl") else None


def is_state_db(tables: set[str]) -> bool:
    return {"sessions", "messages"} <= tables


@dataclass
class OpenClawAgent:
    """One agent's folder: ``agents/<id>`` (the store may be missing)."""

    root: Path

    @property
    def agent_id(self) -> str:
        return self.root.name

    @property
    def db(self) -> Path:
        return self.root / "agent" / DB_NAME

    @property
    def sessions(self) -> Path:
        return self.root / "sessions"

    def owned(self) -> list[Path]:
        """Every file this store reads or its database keeps beside it."""
        out = [Path(f"{self.db}{sfx}") for sfx in ("", "-wal", "-shm", "-journal")]
        if (self.sessions / "cold").is_dir():
            out.extend(p for p in (self.sessions / "cold").glob("*.jsonl.zst") if p.is_file())
        for folder in (self.root / IMPORT_ARCHIVE, self.sessions):
            if folder.is_dir():  # transcripts only: anything else is listed as not read, with its reason
                out.extend(p for p in folder.iterdir() if p.is_file() and transcript_kind(p.name))
        return [p for p in out if p.exists()]


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


def store_signature(unit: StoreUnit) -> str:
    """Size and mtime of every file the store owns, and the folders archives appear in. Not the
    ``-shm``: it holds no data (an index of the WAL) and every reader, ars included, writes to it."""
    rows = []
    for p in sorted({*unit.owned, *_folders(unit)}):
        if p.name.endswith("-shm"):
            continue
        try:
            st = p.stat()
            rows.append([str(p), st.st_size, st.st_mtime_ns])
        except OSError:
            rows.append([str(p)])
    return hashlib.sha1(json.dumps(rows).encode()).hexdigest()


def wal_in_use(unit: StoreUnit) -> bool:
    """Whether a database of the store has a WAL with frames in it (its agent is running). Then
    files that look as they did prove nothing: after a checkpoint the WAL restarts at its first
    frame, so a commit can leave its size as it was, and an mtime within one tick of the clock
    looks the same. A same signature skips only a store at rest; a running one has its sessions
    listed again (one query; only sessions whose version moved are read)."""
    for p in unit.owned:
        if p.name.endswith("-wal"):
            try:
                if p.stat().st_size > 0:
                    return True
            except OSError:
                continue
    return False


def _folders(unit: StoreUnit) -> list[Path]:
    if unit.kind != "openclaw":
        return [unit.path.parent]
    agent = OpenClawAgent(unit.path)
    return [agent.db.parent, agent.sessions, agent.sessions / "cold", agent.root / IMPORT_ARCHIVE]


