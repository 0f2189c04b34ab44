"""Which peers' tombstones this host obeys.

A pulled copy is deleted because its writer forgot it, and only then: anyone
holding the team's Neo4j credentials (an agent on any host reads them from
its config) could otherwise write ``Forgotten`` nodes and erase what an agent
did from every other host. Each host declares its key when it first claims
its host id, and its supervisor's key with it or later (core/team/declare.py);
this host pinned them the first time it saw them (core/team/pins.py). A
``Forgotten`` node is obeyed only when:

* its host has a pinned supervisor key: the node carries that host's forget
  decision (core/govern/forget.py) signed by that key, naming the episode,
  and the host key's signature over the node (which names the host); or
* its host has no supervisor key (its forgets are "unverified" on its own
  side too): the node carries the host key's signature over (namespace,
  host, id, tombstone event) (core/team/digest.py ``tombstone_text``).

A host with no pinned key has none of its tombstones obeyed. A declared key
that differs from the pinned one changes nothing: the pinned one counts.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.team.pins import Pins
    from core.team.refusals import Refusals


def _names_it(decision: dict, pin: str, episode_id: str) -> str:
    """"" when ``decision`` is signed by ``pin`` and forgets ``episode_id``, else why not."""
    from core.inbox.signing import verify_text

    text, why = verify_text(decision, pin)
    if text is None:
        return why
    try:
        payload = json.loads(text)
    except ValueError:
        return "its signed text is not a forget decision"
    if payload.get("kind") != "forget" or episode_id not in (payload.get("ids") or []):
        return "the signed decision does not name this episode"
    return ""


def _host_signed(row: dict[str, Any], namespace: str, key: str) -> str:
    """"" when the host key ``key`` signed this ``Forgotten`` node, else why not."""
    from core.team.digest import tombstone_text
    from core.team.host_key import verify

    sig = row.get("sig")
    if not sig:
        return "it is not signed by its host's key (written by someone else with the graph's credentials)"
    if not verify(key, tombstone_text(namespace, row["host"], str(row["id"]), str(row.get("event") or "")), sig):
        return "its signature is not by the host's pinned key"
    return ""


def signed_rows(rows: list[dict[str, Any]], namespace: str, pins: "Pins", refusals: "Refusals") -> list[dict[str, Any]]:
    """The ``Forgotten`` rows this host obeys; the others are counted per host in ``refusals``."""
    keep: list[dict[str, Any]] = []
    for r in rows:
        host = r["host"]
        key, supervisor = pins.key_of(host), pins.supervisor_of(host)
        if supervisor:
            try:
                decision = json.loads(r.get("decision") or "{}")
            except (TypeError, ValueError):
                decision = {}
            # and the host key's signature: the decision names ids, not the host, so without
            # it one host's signed forget could be replayed against another's same id
            why = _names_it(decision, supervisor, str(r["id"])) or (_host_signed(r, namespace, key) if key else "")
        elif key:
            why = _host_signed(r, namespace, key)
        else:
            why = pins.problems.get(host) or "its host has no pinned key"
        if why:
            refusals.tombstone(host, str(r["id"]), why)
        else:
            keep.append(r)
    return keep
