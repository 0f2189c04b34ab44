"""Checkpoints: the latest state of each loop, and the history of its transitions.

Files (DESIGN.md, State directory), all under ``<state>/checkpoints/``:

* ``<goal>__<loop>.json``: the latest ``LoopState``, written atomically
  (temp file in the same directory, fsync, rename), so a crash leaves the old
  or the new state, never half of one;
* ``<goal>__<loop>.history.jsonl``: one ``HistoryEntry`` a line, appended and
  fsync'd *before* the checkpoint is replaced. The history is the loop's
  write-ahead log: when its last entry is newer than the checkpoint (a crash
  between the two writes), loading rolls forward to it; when the checkpoint is
  corrupt, loading rebuilds it from the history and says so.

Names (``checkpoint_names``) are safe for any goal id; the history is read by
``history_file``.

Retention: history keeps the first entry, every status change and the last
``keep_last`` entries; the rest is compacted away (atomically) every
``compact_every`` appends, so a loop's history cannot grow without bound.
"""

from __future__ import annotations

import fcntl
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from core.infra.fsutil import PRIVATE_FILE, append_line, atomic_write, private_dir
from core.errors import BadQuery
from core.loop.checkpoint_names import GOAL_NAME_BYTES, LOOP_NAME_BYTES, base_name, safe_name
from core.loop.history_file import Problem, describe_error, last_entry, last_index, one_line_error, read_history
from core.loop.models import HistoryEntry, LoopState

CHECKPOINTS = "checkpoints"


class LoopNotFound(BadQuery):
    """No checkpoint or history for this loop id."""


class CorruptCheckpoint(RuntimeError):
    """A checkpoint file that cannot be read (and no history to rebuild it from),
    or a checkpoint or history path that is not a file at all."""

    def __init__(self, path: Path, error: str, message: str | None = None):
        self.path = Path(path)
        self.error = error if message else f"corrupt checkpoint: {error}"
        super().__init__(message or f"checkpoint {self.path.name} is corrupt: {error}")


def _not_a_file(path: Path, what: str) -> CorruptCheckpoint:
    """A checkpoint or history path that is a directory (or another non-file):
    nothing can be written there until a person moves it aside."""
    how = "the loop's state is rebuilt from its history" if what == "checkpoint" else \
        "a new history starts (the checkpoint holds the latest state)"
    error = f"is a directory, not a file: move it aside (mv '{path}' '{path}.bad'); {how}"
    return CorruptCheckpoint(path, error, f"{what} {path.name} {error}")


class LoopBusy(RuntimeError):
    """Another process is running this loop."""


# -- the store -----------------------------------------------------------------------
@dataclass
class Loaded:
    state: LoopState
    warnings: list[str] = field(default_factory=list)
    recovered: bool = False  # rolled forward from history (or rebuilt from it)


@dataclass
class Listing:
    states: list[LoopState]
    problems: list[Problem]


class CheckpointStore:
    def __init__(self, state_dir: Path, *, keep_last: int = 200, compact_every: int = 50,
                 max_status_changes: int = 500):
        self.dir = Path(state_dir) / CHECKPOINTS
        self.keep_last = keep_last
        self.compact_every = compact_every
        self.max_status_changes = max_status_changes
        self.warnings: list[str] = []  # what a front end should tell the person (recovered files...)
        self._bases: dict[str, Path] = {}  # loop id -> the base name its files have on disk

    # -- paths ------------------------------------------------------------------------
    def base(self, goal_id: str, loop_id: str) -> Path:
        p = self.dir / f"{safe_name(goal_id, GOAL_NAME_BYTES)}__{safe_name(loop_id, LOOP_NAME_BYTES)}"
        # belt and braces: whatever the name, it is one component inside checkpoints/
        assert p.parent == self.dir and "/" not in p.name and "\x00" not in p.name
        return p

    def _base_of(self, state: LoopState) -> Path:
        """Where this loop's files are: the names it already has on disk (a loop
        written under an older naming keeps its files), else the new name."""
        known = self._bases.get(state.loop_id)
        if known is None:
            known = self._find(state.loop_id) or self.base(state.goal_id, state.loop_id)
            self._bases[state.loop_id] = known
        return known

    def latest_path(self, state: LoopState) -> Path:
        b = self._base_of(state)
        return b.with_name(b.name + ".json")

    def history_path(self, state: LoopState) -> Path:
        b = self._base_of(state)
        return b.with_name(b.name + ".history.jsonl")

    def _find(self, loop_id: str) -> Path | None:
        """The base of the files whose loop part is exactly this loop's name.

        ``<goal>__<loop>`` is split at its last ``__``: the loop part never holds
        ``__`` and never starts with ``_`` (escaped), so a different loop (or a goal
        id holding ``__``) never matches through the separator."""
        want = safe_name(loop_id, LOOP_NAME_BYTES)
        found: list[str] = []
        if self.dir.is_dir():
            for p in self.dir.iterdir():
                base = base_name(p.name)
                if base is None:
                    continue
                _, sep, loop_part = base.rpartition("__")
                if sep and loop_part == want:
                    found.append(base)
        if not found:
            return None
        # two goal parts for one loop id (a copied file): the one with a checkpoint, then by name
        found.sort(key=lambda b: (not (self.dir / f"{b}.json").exists(), b))
        return self.dir / found[0]

    def _files(self, loop_id: str) -> tuple[Path | None, Path | None]:
        b = self._find(loop_id)
        if b is None:
            return None, None
        self._bases.setdefault(loop_id, b)
        return b.with_name(b.name + ".json"), b.with_name(b.name + ".history.jsonl")

    # -- writing ------------------------------------------------------------------------
    def save(self, state: LoopState) -> Path:
        path = self.latest_path(state)
        atomic_write(path, state.model_dump_json(indent=1))
        return path

    def append(self, entry: HistoryEntry) -> Path:
        path = self.history_path(entry.state)
        append_line(path, entry.model_dump_json())
        if entry.index % self.compact_every == 0:
            self.compact(path)
        return path

    def compact(self, path: Path) -> int:
        """Apply the retention rule to one history file; returns entries dropped."""
        entries, _ = read_history(path)
        keep = self.retained(entries)
        if len(keep) == len(entries):
            return 0
        atomic_write(path, "".join(e.model_dump_json() + "\n" for e in keep))
        return len(entries) - len(keep)

    def retained(self, entries: list[HistoryEntry]) -> list[HistoryEntry]:
        if len(entries) <= self.keep_last:
            return entries
        tail = {e.index for e in entries[-self.keep_last:]}
        changes = [e.index for e in entries if e.status_changed]
        keep = tail | set(changes[-self.max_status_changes:]) | {entries[0].index}
        return [e for e in entries if e.index in keep]

    @contextmanager
    def lock(self, loop_id: str, timeout: float = 10.0):
        """Exclusive right to run (and so to write) one loop; released if the holder dies."""
        locks = self.dir / ".locks"
        private_dir(locks)
        path = locks / f"{safe_name(loop_id, LOOP_NAME_BYTES)}.lock"
        fh = os.fdopen(os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, PRIVATE_FILE), "a+")
        try:
            end = time.monotonic() + timeout
            while True:
                try:
                    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= end:
                        raise LoopBusy(f"loop {loop_id} is being run by another process; "
                                       "try again when it stops (ars loop show shows its status)") from None
                    time.sleep(0.05)
            yield
        finally:
            fh.close()  # closing drops the lock

    def is_running(self, loop_id: str) -> bool:
        """Whether some process holds the loop's run lock right now."""
        path = self.dir / ".locks" / f"{safe_name(loop_id, LOOP_NAME_BYTES)}.lock"
        if not path.exists():
            return False
        with open(path, "a+") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(fh, fcntl.LOCK_UN)
            return False

    # -- reading ---------------------------------------------------------------------------
    def exists(self, loop_id: str) -> bool:
        latest, history = self._files(loop_id)
        return bool((latest and latest.exists()) or (history and history.exists()))

    def load(self, loop_id: str) -> Loaded:
        latest, history = self._files(loop_id)
        if latest is None or not (latest.exists() or (history and history.exists())):
            raise LoopNotFound(f"no loop {loop_id!r} in {self.dir}: `ars loop list` shows the loops there")
        return self._load_files(latest, history)

    def _load_files(self, latest: Path, history: Path | None) -> Loaded:
        state: LoopState | None = None
        error = ""
        if history is not None and history.exists() and not history.is_file():
            raise _not_a_file(history, "history")
        if latest.exists() and not latest.is_file():
            raise _not_a_file(latest, "checkpoint")
        if latest.exists():
            try:
                state = LoopState.model_validate_json(latest.read_bytes())
            except (ValidationError, ValueError, UnicodeDecodeError) as exc:
                error = describe_error(exc)
        else:
            error = "missing"
        if state is not None:
            peek = last_index(history)
            if peek is not None and peek <= state.seq:
                return Loaded(state)  # the common case: the checkpoint is as new as its history
        last = last_entry(history) if history is not None else None
        if state is not None and (last is None or last.index <= state.seq):
            return Loaded(state)
        if last is not None:
            if state is None:
                warn = f"checkpoint {latest.name} is {'missing' if error == 'missing' else 'corrupt: ' + error}; " \
                       f"rebuilt from history entry {last.index}"
            else:
                warn = f"checkpoint {latest.name} was behind its history (entry {state.seq} < {last.index}); rolled forward"
            return Loaded(last.state, [warn], recovered=True)
        raise CorruptCheckpoint(latest, f"{error}; no history to rebuild it from: restore the file "
                                        "from a backup or delete it")

    def history(self, loop_id: str) -> tuple[list[HistoryEntry], list[Problem]]:
        latest, history = self._files(loop_id)
        if history is None or not history.exists():
            if latest is None or not latest.exists():
                raise LoopNotFound(f"no loop {loop_id!r} in {self.dir}: `ars loop list` shows the loops there")
            return [], []
        if not history.is_file():
            raise _not_a_file(history, "history")
        return read_history(history)

    def bases(self) -> list[str]:
        """Every loop's file base (``<goal>__<loop>``), the most recently written first:
        one directory scan and no file read, so a front end can list the loops a person
        sees first before it reads the rest (reading and checking a state is ~1.5 ms)."""
        if not self.dir.is_dir():
            return []
        newest: dict[str, int] = {}
        with os.scandir(self.dir) as entries:
            for e in entries:
                base = base_name(e.name)
                if base is None:
                    continue
                try:
                    mtime = e.stat().st_mtime_ns
                except OSError:  # gone since the scan: it sorts last, and list() says what it found
                    mtime = 0
                newest[base] = max(mtime, newest.get(base, 0))
        return sorted(newest, key=lambda b: (-newest[b], b))

    def list(self, bases: list[str] | None = None) -> Listing:
        """Every loop's latest state, newest first (or those of ``bases``, from ``bases()``)."""
        states: list[LoopState] = []
        problems: list[Problem] = []
        if not self.dir.is_dir():
            return Listing(states, problems)
        if bases is None:
            bases = sorted({b for b in (base_name(p.name) for p in self.dir.iterdir()) if b is not None})
        for base in bases:
            latest = self.dir / f"{base}.json"
            history = self.dir / f"{base}.history.jsonl"
            try:
                loaded = self._load_files(latest, history)
            except CorruptCheckpoint as exc:
                problems.append(Problem(file=exc.path.name, error=exc.error))
                continue
            except OSError as exc:
                problems.append(Problem(file=latest.name, error=one_line_error(exc)))
                continue
            for w in loaded.warnings:
                problems.append(Problem(file=latest.name, error=w))
            states.append(loaded.state)
        states.sort(key=lambda s: s.updated_at, reverse=True)
        return Listing(states, problems)
