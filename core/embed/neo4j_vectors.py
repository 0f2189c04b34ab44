"""Episode vectors in Neo4j 5's native vector index (the dense tier's second home).

Vectors are copied from ``vectors.sqlite`` (cursor ``neo4j`` over its
``seq``) onto the ``Episode`` nodes as ``embedding`` with ``embed_model``:
MERGE by namespace and id (every query here is inside the store's namespace), so a vector that arrives before its episode's own sync is kept
(the episode sync's ``SET e += props`` leaves it alone). One index,
``episode_embedding``, of the current model's dimension and cosine
similarity; a model of another dimension rebuilds it. Neo4j's cosine score
is ``(1 + cos) / 2``: converted back, so both homes report the same cosine.
"""

from __future__ import annotations

from typing import Any, Sequence

INDEX = "episode_embedding"
PUSH = """
UNWIND $rows AS r
MERGE (e:Episode {namespace: $ns, id: r.id})
SET e.embedding = r.vec, e.embed_model = r.model
"""
SEARCH = f"""
CALL db.index.vector.queryNodes('{INDEX}', $limit, $vec) YIELD node, score
WITH node, score WHERE node.embed_model = $model AND node.namespace = $ns
RETURN node.id AS id, score, node.summary AS summary, node.text AS text
LIMIT $k
"""
RANK = f"""
MATCH (t:Episode {{namespace: $ns, id: $id}}) WHERE t.embed_model = $model AND t.embedding IS NOT NULL
WITH t, vector.similarity.cosine(t.embedding, $vec) AS s
RETURN s AS score
"""
COUNT = "MATCH (e:Episode) WHERE e.namespace = $ns AND e.embed_model = $model RETURN count(e) AS c"


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
    store.ensure_schema()
    with store._driver.session(database=store.database) as s:
        s.execute_write(lambda tx: tx.run(PUSH, rows=list(rows), ns=store.namespace).consume())


def search(store, vec: list[float], model: str, k: int, timeout: float) -> list[dict]:
    # over-fetch: vectors of another model of the same dimension, and other
    # namespaces' (filtered out: a namespace is a hard boundary), share the index
    return store._run_within(SEARCH, timeout, vec=vec, model=model, k=k, limit=max(k * 4, 50))


def cosine_of(store, episode_id: str, vec: list[float], model: str, timeout: float) -> float | None:
    rows = store._run_within(RANK, timeout, id=episode_id, vec=vec, model=model)
    return float(rows[0]["score"]) if rows else None


def count(store, model: str) -> int:
    return store._run(COUNT, model=model)[0]["c"]


def cosine(score: float) -> float:
    """Neo4j's normalised cosine score back to the cosine."""
    return 2.0 * float(score) - 1.0
