"""Ingest the stores ``discover`` found: only what changed since the cursor, each session whole.

A store whose files have the signature recorded last, and no database of which
has a WAL in use, is not opened at all (the fast path of a re-ingest when nothing
changed; ``layout.wal_in_use`` says why a running agent's store is listed again). Otherwise its sessions are listed
with their versions, and only sessions whose version moved are read again, whole:
a session's episodes depend on all of it (a ``leaf`` entry can move the active
branch back), and the ids are stable, so unchanged episodes are skipped by the
pipeline's content check. The cursor moves once the episodes are durable; a
session that could not be read keeps its old version and is read next time.
"""

from __future__ import annotations

import sqlite3
from typing import Callable, Iterator

from core.models import Episode
from core.ingest.formats.parsed import Parsed, shown
from core.ingest.stores import hermes_db, openclaw_db
from core.ingest.stores.cursor import StoreCursors
from core.ingest.stores.layout import OpenClawAgent, StoreUnit, store_signature, wal_in_use
from core.ingest.stores.openclaw_db import SessionCopies
from core.ingest.stores.sqlite_ro import StoreBusy

# sessions whose live events are read in one snapshot: one connection for many small sessions,
# memory bounded by the event count (a session with more is read alone)
PRELOAD_SESSIONS, PRELOAD_EVENTS = 50, 20_000

# put(episodes, summary): redact, compare, add to the group writer (the pipeline's)
Put = Callable[[Iterator[Episode], object], None]


def ingest_store(unit: StoreUnit, cursors: StoreCursors, summary, parsed: Parsed, put: Put,
                 flush: Callable[[], None], force: bool = False) -> None:
    """Read what changed in one store into ``put``; then ``flush`` and move the cursor."""
    signature = store_signature(unit)
    if not force and cursors.signature(unit.key) == signature and not wal_in_use(unit):
        summary.status = "unchanged"
        return
    before = {} if force else cursors.units(unit.key)
    failed_before = _copy_failures(parsed)
    try:
        versions, episodes = (_openclaw if unit.kind == "openclaw" else _hermes)(unit, before, parsed)
        put(episodes, summary)
    except StoreBusy as exc:
        summary.status, summary.error = "unchanged", str(exc)
        return
    flush()
    if _copy_failures(parsed) > failed_before:
        signature = None  # something could not be read: look again next time, not the fast path
    cursors.save(unit.key, signature, versions)


def _openclaw(unit: StoreUnit, before: dict, parsed: Parsed) -> tuple[dict, Iterator[Episode]]:
    agent = OpenClawAgent(unit.path)
    sessions = openclaw_db.list_sessions(agent)
    versions = {s.session_id: "|".join(f"{c.unit}={c.key}" for c in s.copies) for s in sessions}
    changed = [s for s in sessions if before.get(s.session_id) != versions[s.session_id]]

    def episodes() -> Iterator[Episode]:
        for chunk in _chunks(changed):
            try:
                preloaded = openclaw_db.preload(agent, chunk)
            except (sqlite3.Error, ValueError):  # read session by session instead: each failure then names its copy
                preloaded = {}
            for s in chunk:
                yield from _one_session(agent, s, parsed, preloaded, versions, before)
    return versions, episodes()


def _chunks(sessions: list[SessionCopies]) -> Iterator[list[SessionCopies]]:
    return _bounded(sessions, lambda s: sum(_event_count(c.key) for c in s.copies if c.unit.startswith("db:")))


def _bounded(items: list, size: Callable[[object], int]) -> Iterator[list]:
    """``items`` in runs of at most PRELOAD_SESSIONS, and PRELOAD_EVENTS events unless one item alone has more."""
    chunk: list = []
    events = 0
    for item in items:
        n = size(item)
        if chunk and (len(chunk) >= PRELOAD_SESSIONS or events + n > PRELOAD_EVENTS):
            yield chunk
            chunk, events = [], 0
        chunk.append(item)
        events += n
    if chunk:
        yield chunk


def _event_count(key: str) -> int:
    """The row count in a version: OpenClaw's ``last_seq:count:generation``, Hermes' ``last_id:rows:...``."""
    try:
        return int(key.split(":")[1])
    except (IndexError, ValueError):
        return 0


def _one_session(agent: OpenClawAgent, s: SessionCopies, parsed: Parsed, preloaded: dict, versions: dict,
                 before: dict) -> Iterator[Episode]:
    """One session's episodes; a copy that failed keeps the session's old version (read again next time)."""
    failed_before = _copy_failures(parsed)
    yield from openclaw_db.session_episodes(agent, s, parsed, preloaded)
    if _copy_failures(parsed) > failed_before:
        versions[s.session_id] = before.get(s.session_id, "")


def _copy_failures(parsed: Parsed) -> int:
    return sum(1 for m in parsed.malformed if m.line == 0)


def _hermes(unit: StoreUnit, before: dict, parsed: Parsed) -> tuple[dict, Iterator[Episode]]:
    versions = hermes_db.list_sessions(unit.path)
    changed = [sid for sid, v in versions.items() if before.get(sid) != v]

    def episodes() -> Iterator[Episode]:
        # one snapshot per chunk of sessions, bounded like OpenClaw's (a version is ``last_id:rows:...``)
        for chunk in _bounded(changed, lambda sid: _event_count(versions[sid])):
            for session, rows in hermes_db.read_sessions(unit.path, chunk):
                yield from hermes_db.session_episodes(unit.path, session, rows, parsed)
    return versions, episodes()


def store_label(unit: StoreUnit) -> str:
    return shown(unit.shown)


def store_format(unit: StoreUnit) -> str:
    return "openclaw-store" if unit.kind == "openclaw" else "hermes-store"
