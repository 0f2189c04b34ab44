"""Episode vectors in Neo4j 5's native vector index (the dense tier's second home).

Vectors are copied from ``vectors.sqlite`` (cursor ``neo4j`` over its
``seq``) onto the ``Episode`` nodes as ``embedding`` with ``embed_model``:
MERGE by id, so a vector that arrives before its episode's own sync is kept
(the episode sync's ``SET e += props`` leaves it alone). Episodes are keyed by
host (two hosts may write the same id): a vector goes to the node this host
calls by that name (``core/team/names.py``), and only this host's own
episode is made ahead of its sync. One index,
``episode_embedding``, of the current model's dimension and cosine
similarity; a model of another dimension rebuilds it. Neo4j's cosine score
is ``(1 + cos) / 2``: converted back, so both homes report the same cosine.
"""

from __future__ import annotations

from typing import Any, Sequence

from core.team.names import split_name
from core.team.graph import RESOLVE, named

INDEX = "episode_embedding"


def _ns(store) -> tuple[str, str, dict]:
    """A store scoped to a namespace (team memory) keys and filters its
    episodes by it: (MERGE key part, WHERE part, params). Unscoped: nothing."""
    ns = getattr(store, "namespace", None)
    if ns is None:
        return "", "", {}
    return ", namespace: $ns", " AND node.namespace = $ns", {"ns": ns}


def _push(key: str) -> str:
    if not key:  # unscoped
        return """
UNWIND $rows AS r
MERGE (e:Episode {id: r.name})
SET e.embedding = r.vec, e.embed_model = r.model
"""
    return """
UNWIND $rows AS r
""" + RESOLVE + """
WITH r, e
CALL (r, e) {
  WITH r, e WHERE e IS NOT NULL
  SET e.embedding = r.vec, e.embed_model = r.model
}
CALL (r, e) {
  // not in the graph yet: this host's own episode, ahead of its sync (its push MERGEs onto it)
  WITH r WHERE e IS NULL AND r.qid IS NULL
  MERGE (own:Episode {namespace: $ns, host: $me, id: r.name})
  SET own.embedding = r.vec, own.embed_model = r.model
}
"""


def _search(where: str) -> str:
    name = named("node") if where else "node.id"
    return f"""
CALL db.index.vector.queryNodes('{INDEX}', $limit, $vec) YIELD node, score
WITH node, score WHERE node.embed_model = $model{where}
RETURN {name} AS id, score, node.summary AS summary, node.text AS text, node.host AS host
LIMIT $k
"""


def _rank(where: str) -> str:
    if not where:  # unscoped
        return """
MATCH (node:Episode {id: $id}) WHERE node.embed_model = $model AND node.embedding IS NOT NULL
WITH node, vector.similarity.cosine(node.embedding, $vec) AS s
RETURN s AS score
"""
    return """
UNWIND [{name: $id, qid: $qid, qhost: $qhost}] AS r
""" + RESOLVE + """
WITH e AS node WHERE node IS NOT NULL AND node.embed_model = $model AND node.embedding IS NOT NULL
WITH node, vector.similarity.cosine(node.embedding, $vec) AS s
RETURN s AS score
"""


def _count(where: str) -> str:
    return f"MATCH (node:Episode) WHERE node.embed_model = $model{where} RETURN count(node) AS c"


def ensure_index(store, dim: int) -> None:
    """The vector index, of dimension ``dim`` (rebuilt when it differs)."""
    found = store._run(f"SHOW VECTOR INDEXES YIELD name, options WHERE name = '{INDEX}' RETURN options")
    if found:
        cfg = (found[0]["options"] or {}).get("indexConfig", {})
        if int(cfg.get("vector.dimensions", 0)) == dim:
            return
        store._run(f"DROP INDEX {INDEX}", write=True)
    store._run(
        f"CREATE VECTOR INDEX {INDEX} IF NOT EXISTS FOR (e:Episode) ON e.embedding OPTIONS {{indexConfig: "
        f"{{`vector.dimensions`: {int(dim)}, `vector.similarity_function`: 'cosine'}}}}", write=True)
    store._run("CALL db.awaitIndexes(300)", write=True)


def push(store, rows: Sequence[dict[str, Any]]) -> None:
    """Write vectors (``id``, ``vec`` as a list of floats, ``model``) in one transaction."""
    if getattr(store, "refused", ""):
        # another state directory holds this host id: write nothing under it (the
        # cursor stays; the vectors go once this directory has its own id)
        from core.team.identity import HostClaimed

        raise HostClaimed(store.refused)
    store.ensure_schema()
    key, _where, params = _ns(store)
    if key:
        params["me"] = getattr(store, "host", "") or ""
    named_rows = [{**r, "name": r["id"], **dict(zip(("qid", "qhost"), split_name(r["id"])))} for r in rows]
    with store._driver.session(database=store.database) as s:
        s.execute_write(lambda tx: tx.run(_push(key), rows=named_rows, **params).consume())


def search(store, vec: list[float], model: str, k: int, timeout: float) -> list[dict]:
    # over-fetch: vectors of another model of the same dimension share the index
    _key, where, params = _ns(store)
    return store._run_within(_search(where), timeout, vec=vec, model=model, k=k, limit=max(k * 4, 50), **params)


def cosine_of(store, episode_id: str, vec: list[float], model: str, timeout: float) -> float | None:
    _key, where, params = _ns(store)
    qid, qhost = split_name(episode_id)
    rows = store._run_within(_rank(where), timeout, id=episode_id, qid=qid, qhost=qhost, vec=vec, model=model,
                             **params)
    return float(rows[0]["score"]) if rows else None


def count(store, model: str) -> int:
    _key, where, params = _ns(store)
    return store._run(_count(where), model=model, **params)[0]["c"]


def cosine(score: float) -> float:
    """Neo4j's normalised cosine score back to the cosine."""
    return 2.0 * float(score) - 1.0
