"""Team memory's Cypher: how this host names another host's episode node
(``named``, ``RESOLVE``), the migration of a graph from before namespaces,
the pull of other hosts' episodes, and per-host counts for ``sync status``.

Every statement names the namespace (``$ns``, passed by the store's ``_run``).
The functions take any store with the Neo4j tier's ``_run``/``_rows`` (the
``GraphStore`` protocol below), not the tier's class: the tier imports this
module for its migrations and names, so importing the tier here would be a
cycle.
"""

from __future__ import annotations

from typing import Any, Protocol


class GraphStore(Protocol):
    """What these functions use of a Neo4j store (core/memory/tiers/neo4j)."""

    def _run(self, cypher: str, timeout: float | None = None, write: bool = False,
             **params: Any) -> list[dict]: ...

    def _rows(self, cypher: str, timeout: float | None = None, **params: Any) -> list[dict]: ...


def named(v: str) -> str:
    """Cypher: the name this host gives the episode node ``v`` (core/team/names.py):
    its own episodes by their id; another host's by its ``team_id``, except
    that an id this host also wrote is ``id@host``. Needs ``$me``."""
    return (f"CASE WHEN {v}.host = $me OR {v}.team_id IS NULL THEN {v}.id"
            f" WHEN {v}.team_id = {v}.id AND EXISTS {{ MATCH (_mine:Episode {{namespace: {v}.namespace,"
            f" host: $me, id: {v}.id}}) }} THEN {v}.id + '@' + {v}.host ELSE {v}.team_id END")


# The episode node this host calls ``r.name``: its own by id, another host's by
# its team name, or ``id@host`` split into ``r.qid`` and ``r.qhost``
# (core/team/names.py split_name); ``e`` is null when there is none.
RESOLVE = """
CALL (r) {
  OPTIONAL MATCH (a:Episode {namespace: $ns, host: $me, id: r.name})
  OPTIONAL MATCH (b:Episode {namespace: $ns, team_id: r.name})
  OPTIONAL MATCH (c:Episode {namespace: $ns, host: r.qhost, id: r.qid})
  WITH r, [x IN [a, b, c] WHERE x IS NOT NULL AND """ + named("x") + """ = r.name] AS found
  RETURN found[0] AS e
}
"""


MIGRATE_BATCH = 10_000
# Nodes and edges written before namespaces: namespace "default"; an episode's
# agent is its source when it named none (as a push writes it now).
MIGRATE_NODES = """
MATCH (n) WHERE (n:Episode OR n:Entity OR n:Topic) AND n.namespace IS NULL
WITH n LIMIT $batch
SET n.namespace = 'default'
SET n.agent = CASE WHEN n:Episode AND coalesce(n.agent, '') = '' THEN n.source ELSE n.agent END
SET n.team_id = CASE WHEN n:Episode THEN coalesce(n.team_id, n.id) ELSE n.team_id END
RETURN count(*) AS c
"""
# Episodes written while an id was unique in its namespace: their team name is their id.
MIGRATE_TEAM_IDS = """
MATCH (e:Episode) WHERE e.team_id IS NULL AND e.id IS NOT NULL
WITH e LIMIT $batch
SET e.team_id = e.id
RETURN count(*) AS c
"""
MIGRATE_EDGES = """
MATCH ()-[r:MENTIONS|TAGGED|RELATES|FOLLOWED_BY]->() WHERE r.namespace IS NULL
WITH r LIMIT $batch
SET r.namespace = 'default'
RETURN count(*) AS c
"""

HOSTS = """
MATCH (h:Host {namespace: $ns}) WHERE h.name <> $me
RETURN h.name AS name, h.seq AS seq, h.last_push AS at, h.key AS key, h.supervisor AS supervisor,
       h.supervisor_sig AS supervisor_sig ORDER BY name
"""
# The signed batches a page of one host's episodes names (core/team/verify.py).
BATCHES = """
MATCH (b:Batch {namespace: $ns, host: $host}) WHERE b.id IN $ids
RETURN b.id AS id, b.signed AS signed, b.sig AS sig
"""
# One page of a host's episodes after the cursor (seq, then id for ties), in
# push order. The index on (namespace, host, seq, id) finds the start and hands
# the rows over in the ORDER BY's order, so the page is its first ``limit``
# rows: nothing is sorted, and a page costs the same wherever the cursor
# stands (sorting what is after the cursor for every page would make a
# backfill of n episodes cost n^2 / page). ``terms`` are the index terms the
# writing host stored (the pull does not tokenise the text again). The page
# comes back as one record holding a list (``collect`` keeps the order): the
# driver decodes a record per Bolt message in Python, and a record per
# episode was most of a pull's read time on the pulling host.
_PAGE_RETURN = """
WITH e ORDER BY e.namespace, e.host, e.seq, e.id LIMIT $limit
RETURN collect({id: e.id, team_id: e.team_id, host: e.host, seq: e.seq, source: e.source,
       session_id: e.session_id, agent: e.agent,
       channel: e.channel, summary: e.summary, text: e.text, topics: e.topics, terms: e.terms,
       first_ts: e.first_ts, last_ts: e.last_ts, message_count: e.message_count, batch: e.batch,
       entities: [(e)-[:MENTIONS]->(n) | [n.name, n.type]],
       prev: [(a:Episode)-[:FOLLOWED_BY]->(e) | [a.id, a.team_id]][0]}) AS rows
"""
# The cursor is (seq, id): the rest of its seq, then the seqs after it. Two
# statements, each a plain range of the index (written as one with
# ``seq > $seq OR id > $id`` the planner split the OR into a union with a
# scan of every episode, then sorted), and the index named: on a small graph
# the planner's costs favour a label scan and a sort, and a plan cached then
# would go on sorting once the graph is large.
PAGE_TIES = """
MATCH (e:Episode) USING INDEX e:Episode(namespace, host, seq, id)
WHERE e.namespace = $ns AND e.host = $host AND e.seq = $seq AND e.id > $id
""" + _PAGE_RETURN
PAGE = """
MATCH (e:Episode) USING INDEX e:Episode(namespace, host, seq, id)
WHERE e.namespace = $ns AND e.host = $host AND e.seq > $seq AND e.id IS NOT NULL
""" + _PAGE_RETURN
# Another host's episodes that hold the plain ids of ``$ids`` (this host's,
# named ``id@this-host`` in the team because that host had them first): the
# pull brings them again under ``id@that-host`` (pull.partners).
PARTNERS = """
UNWIND $ids AS id
MATCH (e:Episode {namespace: $ns, team_id: id}) WHERE e.host <> $me
""" + _PAGE_RETURN
# ``shared``: episodes whose id another host wrote first (named id@host).
COUNTS = """
MATCH (e:Episode) WHERE e.namespace = $ns
RETURN coalesce(e.host, '') AS host, count(*) AS n,
       sum(CASE WHEN e.team_id <> e.id THEN 1 ELSE 0 END) AS shared
"""
# ``backfill --clear`` (and a rename) of one host: its episodes in pages, each
# page's entities and topics noted before the episodes go.
CLEAR_PAGE = """
MATCH (e:Episode {namespace: $ns, host: $host})
WITH e LIMIT $batch
OPTIONAL MATCH (e)-[:MENTIONS|TAGGED]->(n)
WITH collect(DISTINCT e) AS eps, collect(DISTINCT elementId(n)) AS touched
FOREACH (x IN eps | DETACH DELETE x)
RETURN size(eps) AS c, touched
"""
# The relations this host gave: it leaves their ``hosts``; a relation nobody
# else gave goes, and its ends are checked like the episodes' entities.
CLEAR_RELATIONS = """
MATCH (a:Entity {namespace: $ns})-[x:RELATES]->(b)
WHERE $host IN coalesce(x.hosts, [])
WITH a, x, b LIMIT $batch
SET x.hosts = [h IN x.hosts WHERE h <> $host]
WITH a, x, b, size(x.hosts) = 0 AS gone
FOREACH (_ IN CASE WHEN gone THEN [1] ELSE [] END | DELETE x)
RETURN count(*) AS c, collect(DISTINCT elementId(a)) + collect(DISTINCT elementId(b)) AS touched
"""
# Of the nodes the cleared episodes and relations held, those nothing holds
# any more. A plain DELETE: a node another host's push linked meanwhile makes
# the statement fail, and it stays (an orphan left is harmless; a node
# deleted under another host's edge would not be).
CLEAR_ORPHANS = """
UNWIND $ids AS i
MATCH (n) WHERE elementId(n) = i AND (n:Entity OR n:Topic) AND n.namespace = $ns AND NOT EXISTS { (n)--() }
DELETE n
RETURN count(*) AS c
"""
CLEAR_HOST_NODE = """
MATCH (h:Host {namespace: $ns, name: $host})
REMOVE h.seq, h.fence_at, h.fence_id, h.last_push
"""
RELEASE_HOST_NODE = "MATCH (h:Host {namespace: $ns, name: $host}) DELETE h"
CLEAR_BATCHES = """
MATCH (b:Batch {namespace: $ns, host: $host})
WITH b LIMIT $batch
DELETE b
RETURN count(*) AS c
"""


def migrate(store: "GraphStore", old_constraints: tuple[str, ...], force: bool = False) -> list[str]:
    """Bring a graph written before namespaces into namespace ``default``:
    drop the constraints that made ids unique across the whole graph, then
    label every node and edge in batches. Nothing is deleted. Runs only while
    one of the old constraints exists, or (``force``) when the episode index
    predates namespaces: both cheap to check on every start."""
    names = {r["name"] for r in store._run("SHOW CONSTRAINTS YIELD name RETURN name")}
    old = [n for n in old_constraints if n in names]
    if not old and not force:
        return []
    for name in old:
        store._run(f"DROP CONSTRAINT {name} IF EXISTS", write=True)
    moved = 0
    for cypher in (MIGRATE_NODES, MIGRATE_EDGES):
        while True:
            n = store._run(cypher, write=True, batch=MIGRATE_BATCH)[0]["c"]
            if cypher is MIGRATE_NODES:
                moved += n
            if not n:
                break
    if not moved:
        return []  # nothing was written before namespaces (an empty graph, an index rebuilt for another reason)
    return [f"neo4j: a graph from before namespaces: its {moved} nodes are now namespace 'default' "
            "(nothing lost); run `ars sync backfill` on each host that wrote them, so other hosts can pull them"]


def migrate_keys(store: "GraphStore", old_constraint: str) -> None:
    """A graph from before episodes were keyed by host: every episode's team
    name is its id (ids were unique in a namespace then), then the old
    constraint goes, so two hosts can hold the same id. Runs while the old
    constraint exists (one cheap look on every start); nothing is deleted."""
    names = {r["name"] for r in store._run("SHOW CONSTRAINTS YIELD name RETURN name")}
    if old_constraint not in names:
        return
    while store._run(MIGRATE_TEAM_IDS, write=True, batch=MIGRATE_BATCH)[0]["c"]:
        pass
    store._run(f"DROP CONSTRAINT {old_constraint} IF EXISTS", write=True)


def clear_host(store: "GraphStore", host: str, release: bool = False, batch: int = 5000) -> int:
    """Delete ``host``'s episodes in this namespace, the relations only it
    gave and the entities and topics nothing else holds; keep (or, with
    ``release``, delete) its claim. Returns the episodes deleted."""
    from neo4j.exceptions import ClientError

    deleted, touched = 0, set()
    while True:
        row = store._run(CLEAR_PAGE, write=True, host=host, batch=batch)[0]
        deleted += row["c"]
        touched.update(row["touched"])
        if not row["c"]:
            break
    while True:
        row = store._run(CLEAR_RELATIONS, write=True, host=host, batch=batch)[0]
        touched.update(row["touched"])
        if not row["c"]:
            break
    ids = sorted(touched)
    for i in range(0, len(ids), batch):
        try:
            store._run(CLEAR_ORPHANS, write=True, ids=ids[i : i + batch])
        except ClientError:
            pass  # another host linked one of them meanwhile: these stay
    while store._run(CLEAR_BATCHES, write=True, host=host, batch=batch)[0]["c"]:
        pass  # the signatures of what is gone (the next push signs what it writes again)
    store._run(RELEASE_HOST_NODE if release else CLEAR_HOST_NODE, write=True, host=host)
    return deleted


def partners(store: "GraphStore", ids: list[str]) -> list[dict[str, Any]]:
    """Other hosts' episodes holding the plain ids of this host's ``ids``."""
    got = store._rows(PARTNERS, timeout=60, ids=ids, limit=len(ids))
    return got[0]["rows"] if got else []


def hosts(store: "GraphStore", me: str) -> list[dict[str, Any]]:
    return store._run(HOSTS, me=me)


def batches(store: "GraphStore", host: str, ids: list[str]) -> list[dict[str, Any]]:
    """``host``'s signed batches of these ids (id, signed, sig)."""
    return store._run(BATCHES, timeout=60, host=host, ids=ids) if ids else []


def page(store: "GraphStore", host: str, seq: int, last_id: str, limit: int) -> list[dict[str, Any]]:
    """Up to ``limit`` of ``host``'s episodes after (seq, id), in push order."""
    rows: list[dict[str, Any]] = []
    for cypher in (PAGE_TIES, PAGE):
        got = store._rows(cypher, timeout=60, host=host, seq=seq, id=last_id, limit=limit - len(rows))
        rows += got[0]["rows"] if got else []
        if len(rows) >= limit:
            break
    return rows


def counts(store: "GraphStore") -> dict[str, dict[str, int]]:
    """host -> {n: its episodes in the graph, shared: those named id@host}."""
    return {r["host"]: {"n": r["n"], "shared": r["shared"]} for r in store._run(COUNTS, timeout=30)}
