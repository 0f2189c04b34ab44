"""A capture's episodes into memory: redacted, only what changed, durable at once.

As the ingest pipeline stores them (core/ingest/pipeline.py ``_put``): secrets
redacted before the comparison and the ledger; an episode whose source content
is stored already is skipped; the rest go to the ledger (fsync) and SQLite in
one ``Memory.store``, so a recall right after finds them. The model enrichment
is never waited for here: with ``ARS_ENRICH_WITH_LLM`` on, a captured episode is
marked pending and ``ars enrich --pending`` upgrades it later.

The state directory's writer lock is waited for at most ``wait`` seconds: a long
ingest holding it makes the capture give up (``CaptureBusy``) rather than hold
up the agent's turn; its checkpoint is not moved, so the next capture (or the
catch-up ingest) stores the turn.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Iterator

from core.capture.checkpoints import CaptureBusy
from core.enrich.extract import source_key
from core.govern.redact import redact_episodes
from core.govern.tombstone import load as forgotten
from core.infra.writer_lock import WriterBusy
from core.memory.memory import Memory
from core.models import Episode

PENDING = "deterministic:pending"  # core.enrich.llm.PENDING (not imported: it loads the HTTP client)


@contextmanager
def writer(memory: Memory, wait: float) -> Iterator[None]:
    """The writer lock, tried until ``wait`` seconds have passed."""
    deadline = time.monotonic() + wait
    while True:
        lock = memory.writer("ars capture", blocking=False)
        try:
            lock.__enter__()
            break
        except WriterBusy as exc:
            if time.monotonic() >= deadline:
                raise CaptureBusy(f"{exc}; the turn is stored by the next capture") from None
            time.sleep(0.02)
    try:
        yield
    finally:
        lock.__exit__(None, None, None)


def store_changed(memory: Memory, episodes: list[Episode], wait: float) -> list[Episode]:
    """Store the episodes whose content is not stored yet; returns those."""
    if not episodes:
        return []
    episodes = redact_episodes(episodes)
    with writer(memory, wait):
        stored = memory.sqlite.source_keys([ep.id for ep in episodes])
        gone = forgotten(memory.state_dir)  # what Memory.store leaves out: a forgotten episode or session
        fresh = [ep for ep in episodes if stored.get(ep.id) != source_key(ep)
                 and not (gone and gone.covers(ep.id, ep.session_id))]
        if fresh and memory.settings.enrich_with_llm:
            fresh = [ep.model_copy(update={"meta": {**ep.meta, "enrichment": PENDING}}) for ep in fresh]
        if fresh:
            memory.store(fresh)
    return fresh
