"""The one writer of episodes into SQLite: ledger events, and pulled pages.

Every episode SQLite holds arrives through here, with the cursor that covers
it in the same transaction: this host's own from the ledger (its applied
offset moves with them), another host's from a team pull page (that host's
pull cursor moves with them, core/ledger/cursors.py). A pulled episode is not
in this host's ledger; it is stored under the event id of the page it came in
(``pull:HOST:SEQ``), which the embedding pass of pulled episodes reads back.

A ledger line that is not a valid event is skipped and reported (file, line
and what is wrong): one bad line never stops the rest.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Callable, Mapping, Sequence

from pydantic import ValidationError

from core.errors import first_error
from core.events import EPISODE_EVENT, FORGET_EVENT
from core.govern.scrub import quoted_ids
from core.govern.tombstone import Forgotten
from core.ledger import cursors
from core.ledger.ledger import BadEvent, Ledger
from core.memory.tiers.base import one_line
from core.memory.tiers.sqlite import SqliteStore
from core.models import Episode
from core.team import local as team_local

BATCH = 1000  # episodes per SQLite transaction while catching up


def apply_written(store: SqliteStore, episodes: Sequence[Episode], ids: Sequence[str], starts: Sequence[int],
                  end: int, terms: Mapping[str, str] | None = None) -> None:
    """A batch just appended to the ledger (its lines at ``starts``, ending at
    ``end``), when SQLite had applied everything before it (the write path's fast case).
    ``terms``: index terms already computed by id (an ingest's worker process)."""
    store.upsert(episodes, ids, ledger_offset=end, last_event_id=ids[-1], terms=terms,
                 lines=[(ep.id, at) for ep, at in zip(episodes, starts)])


def apply_ledger(ledger: Ledger, store: SqliteStore, problems: list[BadEvent], tombstones: Forgotten,
                 progress: Callable[[int, int], None] | None = None) -> int:
    """Apply to ``store`` every episode and forget event after its cursor;
    returns the episodes applied. Skipped lines go to ``problems``, the
    forget events met to ``tombstones``; ``progress(offset, ledger size)``
    after each committed batch."""
    start = store.applied_offset()
    size = ledger.size()
    if start >= size:
        return 0
    batch: list[Episode] = []
    ids: list[str] = []
    lines: list[tuple[str, int]] = []  # where each episode's text is in the ledger (ledger_lines)
    applied = 0
    end = start
    bad: list[BadEvent] = []
    for entry in ledger.read(start, on_bad=bad.append):
        end = entry.end
        if entry.type == EPISODE_EVENT:
            try:
                batch.append(Episode.model_validate(entry.data))
                ids.append(entry.event_id)
                lines.append((batch[-1].id, entry.offset))
            except (ValidationError, ValueError, TypeError, RecursionError) as exc:
                why = first_error(exc, "data") if isinstance(exc, ValidationError) else one_line(exc)
                bad.append(BadEvent(entry.offset, ledger.line_of(entry.offset),
                                    f"episode event {entry.event_id} skipped: {why}"))
        elif entry.type == FORGET_EVENT:
            # the tombstone: what came before it goes (``ars rebuild`` keeps it forgotten)
            store.upsert(batch, ids, ledger_offset=entry.offset, last_event_id=ids[-1] if ids else "", lines=lines)
            applied += len(batch)
            batch, ids, lines = [], [], []
            store.forget([str(i) for i in entry.data.get("ids") or []])
            tombstones.add(entry.data)
        else:
            lines.extend((eid, entry.offset) for eid in quoted_ids(entry.data))  # a loop's recall results
        if len(batch) >= BATCH:
            store.upsert(batch, ids, ledger_offset=end, last_event_id=ids[-1], lines=lines)
            applied += len(batch)
            batch, ids, lines = [], [], []
            if progress is not None:
                progress(end, max(size, end))
    if end > start:
        store.upsert(batch, ids, ledger_offset=end, last_event_id=ids[-1] if ids else "", lines=lines)
        applied += len(batch)
    problems.extend(bad)
    return applied


def apply_pulled(store: SqliteStore, host: str, episodes: Sequence[Episode], terms: Mapping[str, str],
                 seq: int, last_id: str | None = None, digests: Mapping[str, str] | None = None) -> int:
    """A page of ``host``'s episodes, stored under the page's event id. With
    ``last_id`` the host's pull cursor moves to (``seq``, ``last_id``) in the
    same transaction; without, the cursor stays (episodes pulled again, not new).
    ``digests``: name -> what their host signed (core/team/local.py), kept with them."""
    def also(conn) -> None:
        if digests:
            team_local.record_digests(conn, host, digests)
        if last_id is not None:
            at = datetime.now(timezone.utc).isoformat(timespec="seconds")
            cursors.move_pull_cursor(conn, host, seq, last_id, len(episodes), at)

    store.upsert(episodes, [cursors.pulled_event_id(host, seq)] * len(episodes), terms=terms,
                 also=also if digests or last_id is not None else None)
    return len(episodes)
