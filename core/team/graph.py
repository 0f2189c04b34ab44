"""Team memory's Cypher: the migration of a graph from before namespaces,
the pull of other hosts' episodes, and per-host counts for ``sync status``.

Every statement names the namespace (``$ns``, passed by the store's ``_run``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..tiers.neo4j_tier import Neo4jStore

MIGRATE_BATCH = 10_000
# Nodes and edges written before namespaces: namespace "default"; an episode's
# agent is its source when it named none (as a push writes it now).
MIGRATE_NODES = """
MATCH (n) WHERE (n:Episode OR n:Entity OR n:Topic) AND n.namespace IS NULL
WITH n LIMIT $batch
SET n.namespace = 'default'
SET n.agent = CASE WHEN n:Episode AND coalesce(n.agent, '') = '' THEN n.source ELSE n.agent END
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
RETURN h.name AS name, h.seq AS seq, h.last_push AS at ORDER BY name
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
RETURN collect({id: e.id, seq: e.seq, source: e.source, session_id: e.session_id, agent: e.agent,
       channel: e.channel, summary: e.summary, text: e.text, topics: e.topics, terms: e.terms,
       first_ts: e.first_ts, last_ts: e.last_ts, message_count: e.message_count,
       entities: [(e)-[:MENTIONS]->(n) | [n.name, n.type]],
       prev: [(a:Episode)-[:FOLLOWED_BY]->(e) | a.id][0]}) AS rows
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
COUNTS = """
MATCH (e:Episode) WHERE e.namespace = $ns
RETURN coalesce(e.host, '') AS host, count(*) AS n
"""


def migrate(store: "Neo4jStore", old_constraints: tuple[str, ...], force: bool = False) -> list[str]:
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


def hosts(store: "Neo4jStore", me: str) -> list[dict[str, Any]]:
    return store._run(HOSTS, me=me)


def page(store: "Neo4jStore", host: str, seq: int, last_id: str, limit: int) -> list[dict[str, Any]]:
    """Up to ``limit`` of ``host``'s episodes after (seq, id), in push order."""
    rows: list[dict[str, Any]] = []
    for cypher in (PAGE_TIES, PAGE):
        got = store._rows(cypher, timeout=60, host=host, seq=seq, id=last_id, limit=limit - len(rows))
        rows += got[0]["rows"] if got else []
        if len(rows) >= limit:
            break
    return rows


def counts(store: "Neo4jStore") -> dict[str, int]:
    return {r["host"]: r["n"] for r in store._run(COUNTS, timeout=30)}
