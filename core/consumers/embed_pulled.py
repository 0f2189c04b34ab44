"""Vectors for the episodes pulled from other hosts (team memory, core/consumers/team_pull.py).

A pulled episode is in this host's SQLite but not in its ledger, so the
ledger consumer never sees it; without this pass the dense tier would miss
the whole team's memory and count it as "not embedded yet" for ever. The
episodes are embedded here, by this host's model (another host may run
another one), from the text SQLite holds.

Each pulled episode carries the page it came in (``event_id`` =
``pull:HOST:SEQ``; SEQ grows along a host's pushes, and a newer version of an
episode comes with a higher one), so the pass keeps, per other host, the
highest SEQ it has embedded (cursor ``pulled``: a JSON object in its
``event_id``, the model in ``model``) and reads only what came after. A model
change starts it over, like the ledger cursor.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Callable, Iterator

from core.ledger.cursors import PULLED_CURSOR, PullCursors, VectorCursors, decode_pulled, encode_pulled, pulled_prefix

if TYPE_CHECKING:
    from core.memory.stores import Stores

BATCH = 64


def _after(conn, host: str, seq: int) -> Iterator[tuple[str, str, int]]:
    """(id, text, seq) of the episodes pulled from ``host`` after ``seq``, in order."""
    prefix = pulled_prefix(host)
    yield from conn.execute(
        "SELECT e.id, e.text, CAST(substr(e.event_id, ?) AS INTEGER) AS s FROM episode_origin o"
        " JOIN episodes e ON e.id = o.id WHERE o.host = ? AND substr(e.event_id, 1, ?) = ? AND s > ?"
        " ORDER BY s", (len(prefix) + 1, host, len(prefix), prefix, seq))


def embed_pulled(stores: "Stores", cursors: VectorCursors, embed_batch: Callable[..., tuple[int, int]],
                 embedder, model: str, until: float) -> tuple[int, int]:
    """Embed what was pulled since the last pass; (embedded, skipped as current).
    ``embed_batch(texts, embedder, model, cursor=)`` embeds and commits a batch
    with the cursor (core/consumers/embeddings.py)."""
    try:
        conn = stores.sqlite.team()
        hosts = PullCursors(lambda: stores.sqlite).hosts()
    except Exception:  # noqa: BLE001 - no team tables (never pulled) or SQLite unreadable: nothing to do
        return 0, 0
    cur = cursors.of(PULLED_CURSOR)
    # an unreadable cursor: embed again (vectors that are current are skipped)
    done: dict[str, int] = decode_pulled(cur.event_id) if cur.model == model else {}
    cur.model = model
    embedded = skipped = 0
    me = stores.identity.host
    for host in hosts:
        if host == me:
            continue
        batch: dict[str, str] = {}
        last = done.get(host, 0)
        rows = list(_after(conn, host, last))
        for i, (eid, text, seq) in enumerate(rows):
            batch[eid] = text or ""
            # a page's episodes share its SEQ: commit only at the end of one
            end_of_page = i + 1 == len(rows) or rows[i + 1][2] != seq
            if end_of_page and (len(batch) >= BATCH or i + 1 == len(rows)):
                done[host] = seq
                cur.event_id = encode_pulled(done)
                e, s = embed_batch(batch, embedder, model, cursor=cur)  # vectors and cursor together
                embedded, skipped = embedded + e, skipped + s
                batch = {}
                if time.monotonic() >= until:
                    return embedded, skipped
    if cur.event_id != encode_pulled(done):
        cur.event_id = encode_pulled(done)
        cursors.save(cur)
    return embedded, skipped
