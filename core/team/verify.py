"""Which of another host's episodes this host takes: those its pinned key signed.

A page of a host's episodes (core/consumers/team_pull.py) comes with the
ids of the signed batches its rows name (core/team/digest.py). The batches
are read once each (a page of 2,000 rows spans two or three), their
signatures checked against the host key this host pinned
(core/team/pins.py), and a row is taken when its batch verifies and lists
the row's recomputed digest under its id. Anything else (no batch, another
key's batch, content that is not what was signed, a host with no pinned
key) is refused; the pull counts it (core/team/refusals.py): one line per host.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.team import graph
from core.team.digest import batch_items, digest
from core.team.host_key import verify

if TYPE_CHECKING:
    from core.team.pins import Pins

NOT_SIGNED = "not signed by its host's key (written by someone else with the graph's credentials)"
BAD_BATCH = "its batch's signature is not by the host's pinned key"
ALTERED = "its content is not what its host signed (altered in the graph)"


class BatchCache:
    """Verified batches of this pull: (host, batch id) -> id -> digest, or None (refused)."""

    def __init__(self) -> None:
        self.items: dict[tuple[str, str], dict[str, str] | None] = {}
        self.forged: set[tuple[str, str]] = set()  # batches there, but not signed by the pinned key

    def fill(self, store, namespace: str, host: str, pin: str, ids: set[str]) -> None:
        need = sorted(i for i in ids if (host, i) not in self.items)
        if not need:
            return
        for b in graph.batches(store, host, need):
            ok = isinstance(b.get("signed"), str) and verify(pin, b["signed"], b.get("sig") or "")
            items = batch_items(b["signed"], namespace, host) if ok else None
            self.items[(host, b["id"])] = items
            if items is None:
                self.forged.add((host, b["id"]))
        for i in need:
            self.items.setdefault((host, i), None)  # named, but no such batch


def row_digest(namespace: str, host: str, row: dict[str, Any]) -> str:
    return digest(namespace, host, row["id"], row.get("seq"), row)


def signed_rows(store, namespace: str, pins: "Pins", host: str, rows: list[dict[str, Any]],
                cache: BatchCache) -> tuple[list[dict[str, Any]], list[tuple[dict[str, Any], str]]]:
    """(the rows of ``host`` signed by its pinned key, each with its ``digest``,
    which recall later compares the graph's answers with (core/team/local.py);
    the others, each with why it was refused)."""
    pin = pins.key_of(host)
    keyed = [r for r in rows if r.get("id")]
    if not pin:
        why = pins.problems.get(host) or "it has no pinned key"
        return [], [(r, why) for r in keyed]
    cache.fill(store, namespace, host, pin, {r["batch"] for r in keyed if isinstance(r.get("batch"), str)})
    ok: list[dict[str, Any]] = []
    bad: list[tuple[dict[str, Any], str]] = []
    for r in keyed:
        batch = r.get("batch")
        items = cache.items.get((host, batch)) if isinstance(batch, str) else None
        if items is None:
            bad.append((r, BAD_BATCH if (host, batch) in cache.forged else NOT_SIGNED))
            continue
        d = row_digest(namespace, host, r)
        if items.get(r["id"]) != d:
            bad.append((r, ALTERED))
            continue
        ok.append({**r, "digest": d})
    return ok, bad


def signed_by(store, namespace: str, host: str, public_b64: str, rows: list[dict[str, Any]]) -> set[str]:
    """The ``id`` of each row of ``host`` whose batch ``public_b64`` signed with the row's
    content as signed: ``signed_rows``' check with that key as the pin. A row carries its
    episode id as ``eid`` and its name as ``id`` (the search's rows)."""
    mine = [r for r in rows if r.get("host") == host and isinstance(r.get("batch"), str)]
    if not mine:
        return set()
    cache = BatchCache()
    cache.fill(store, namespace, host, public_b64, {r["batch"] for r in mine})
    return {r["id"] for r in mine if (cache.items.get((host, r["batch"])) or {}).get(r["eid"])
            == row_digest(namespace, host, {**r, "id": r["eid"]})}
