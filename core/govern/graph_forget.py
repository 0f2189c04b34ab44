"""The tombstone's two consumers outside this state directory.

* The sync worker (core/consumers/neo4j_push.py), reaching a ``memory.forget`` event in the
  ledger, deletes this host's forgotten episodes from Neo4j (with the
  entities and topics only they held), re-sends the session context of
  their neighbours (it held the forgotten terms), and leaves a
  ``Forgotten`` node per episode: (namespace, host, id, team_id), no text,
  with the supervisor's signed decision and the host key's signature.
* The pull (core/consumers/team_pull.py) of every other host reads the ``Forgotten``
  nodes of its namespace, keeps those their host's pinned keys signed
  (core/govern/trusted.py), and deletes its pulled copies (SQLite rows, FTS
  entries, vectors) at its next pull, and remembers them as forgotten so a
  later pull (or ``ars sync pull --reset``) never stores them again.
"""

from __future__ import annotations

import json
from core.infra.sqlite_lib import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.infra.fsutil import atomic_write
from core.team.digest import tombstone_text
from core.team.names import qualified
from core.govern import scrub, tombstone, trusted

if TYPE_CHECKING:
    from core.memory.stores import Stores
    from core.memory.tiers.neo4j import Neo4jStore
    from core.team.pins import Pins
    from core.team.refusals import Refusals

DROP = """
UNWIND $ids AS id
MATCH (e:Episode {namespace: $ns, host: $me, id: id})
OPTIONAL MATCH (e)-[:MENTIONS|TAGGED]->(n)
WITH e, collect(DISTINCT elementId(n)) AS touched
WITH collect(e) AS eps, collect([e.id, e.team_id]) AS names, reduce(a = [], t IN collect(touched) | a + t) AS touched
FOREACH (x IN eps | DETACH DELETE x)
RETURN size(eps) AS c, names, touched
"""
# ``sig``: the host key's signature, which peers check when the host has no
# supervisor key (core/govern/trusted.py); the keys were declared with the claim
MARK = """
UNWIND $rows AS r
MERGE (f:Forgotten {namespace: $ns, host: $me, id: r.id})
SET f.team_id = r.team_id, f.at = $at, f.event_id = $event, f.decision = $decision, f.sig = r.sig
"""
CONTEXT = """
UNWIND $rows AS r
MATCH (e:Episode {namespace: $ns, host: $me, id: r.id})
SET e.context = r.context
"""
TOMBSTONES = """
MATCH (f:Forgotten {namespace: $ns}) WHERE f.host <> $me
RETURN f.host AS host, f.id AS id, f.team_id AS team_id, f.decision AS decision, f.sig AS sig,
       f.event_id AS event
"""


def drop(memory: "Stores", store: "Neo4jStore", event_id: str, data: dict[str, Any]) -> int:
    """Carry one tombstone to the graph (idempotent); returns the episodes deleted."""
    from core.team.graph import CLEAR_ORPHANS

    own = [str(i) for i in data.get("own") or data.get("ids") or []]
    if not own:
        return 0
    row = store._run(DROP, write=True, ids=own)[0]
    names = {i: t for i, t in row["names"]}
    key = store.host_key  # set by the claim, which every push makes before it writes
    store._run(MARK, write=True, rows=[{"id": i, "team_id": names.get(i) or i,
                                        "sig": key.sign(tombstone_text(store.namespace, store.host, i, event_id))
                                        if key is not None else None} for i in own],
               at=data.get("at", ""), event=event_id, decision=json.dumps(data.get("decision") or {}))
    touched = sorted(set(row["touched"]))
    for i in range(0, len(touched), 5000):
        try:
            store._run(CLEAR_ORPHANS, write=True, ids=touched[i:i + 5000])
        except Exception:  # noqa: BLE001 - an entity another push linked meanwhile stays (no text of its own)
            pass
    _resend_contexts(memory, store, event_id)
    return row["c"]


def _resend_contexts(memory: "Stores", store: "Neo4jStore", event_id: str) -> None:
    path = Path(memory.state_dir) / "forget-contexts.json"
    try:
        noted = json.loads(path.read_text())
    except (OSError, ValueError):
        return
    ids = noted.get(event_id) or []
    if ids:
        try:
            contexts = memory.sqlite.contexts_around(ids)
        except sqlite3.Error:
            return
        rows = [{"id": i, "context": contexts[i]} for i in ids if i in contexts]
        if rows:
            store._run(CONTEXT, write=True, rows=rows)
    noted.pop(event_id, None)  # sent: the note has done its job
    atomic_write(path, json.dumps(noted))


def drop_pulled(memory: "Stores", store: "Neo4jStore", pins: "Pins", refusals: "Refusals") -> int:
    """Delete this host's pulled copies of episodes their writer forgot, as
    its pinned keys signed it (core/govern/trusted.py); returns how many.
    Tombstones not obeyed are counted per host in ``refusals``."""
    rows = store._rows(TOMBSTONES, timeout=60)
    if not rows:
        return 0
    rows = trusted.signed_rows(rows, store.namespace, pins, refusals)
    if not rows:
        return 0
    conn = memory.sqlite.team()
    names: dict[str, str] = {}  # local name -> its host
    for r in rows:
        for name in {r.get("team_id") or r["id"], r["id"], qualified(r["id"], r["host"])}:
            names[name] = r["host"]
    gone = tombstone.load(memory.state_dir).ids
    todo = [n for n in names if n not in gone]
    if not todo:
        return 0
    from core.infra.sqlite_in import rows_in
    from core.team import local

    mine = local.own_ids(conn, todo, memory.identity)  # this host's own episode of the same id stays
    todo = [n for n in todo if n not in mine]

    here = [eid for eid, host in rows_in(conn, "SELECT id, host FROM episode_origin WHERE id IN ({in})", todo)
            if host == names.get(eid)]
    if here:
        memory.sqlite.forget(here)
        scrub.forget_vectors(Path(memory.state_dir), set(here))
    # remembered as forgotten: a later pull (or a reset one) never stores them again
    tombstone.merge(memory.state_dir, {"ids": todo})
    return len(here)
