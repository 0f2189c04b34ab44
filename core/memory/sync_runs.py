"""The deferred ledger consumers run on a person's request: ``ars sync status/run``,
``ars sync backfill``, ``ars team pull``, a host's rename, the dashboard's embedding of a
loop's episodes, the enrichment retry and the SQLite rebuild. Each works on an open
``Memory`` and its settings; ``core.api.ARS`` calls them."""

from __future__ import annotations

from typing import Any

from core.errors import BadQuery


def sync_status(memory, settings) -> dict[str, Any]:
    """Pending and failed sync counts, per-store counts, drift, last error;
    ``embeddings``: the embedding backlog (episodes not embedded yet)."""
    status = memory.sync.status()
    try:
        status["embeddings"] = memory.embeddings.status()
    except Exception as exc:  # noqa: BLE001 - one consumer's trouble never hides the others'
        from core.memory.tiers.base import one_line

        status["embeddings"] = {"embedder": settings.embedder, "last_error": one_line(exc)}
    return status


def sync_run(memory, settings, max_seconds: float = 300.0):
    """Drain every ledger consumer: Neo4j (when configured), then the embeddings
    (vectors.sqlite, and their copy in Neo4j's vector index). Works without Neo4j;
    ``ok`` is false when any consumer failed."""
    return memory.sync.run_all(max_seconds=max_seconds)  # core/consumers/orchestrator.py


def embed_new(memory, settings, max_seconds: float = 60.0):
    """Embed the episodes written since the last run, unless embedding is off or another
    process is at it (then None)."""
    if settings.embedder == "off":
        return None
    report = memory.embeddings.run(max_seconds=max_seconds, wait=False)
    return None if report.busy else report


def backfill(memory, settings, clear: bool = False, progress=None):
    if memory.neo4j is None:
        raise BadQuery("neo4j is not configured: set ARS_NEO4J_URI (see README, Neo4j)")
    report = memory.sync.backfill(clear=clear, progress=progress)
    if clear and report.ok and settings.embedder != "off":
        memory.embeddings.reset_neo4j()  # the vectors went with the graph: copy them again
        report.embeddings = memory.embeddings.run()
    return report


def rename_host(memory, settings, new_host: str) -> dict[str, Any]:
    done = memory.sync.rename(new_host)
    if memory.neo4j is not None and settings.embedder != "off":
        memory.embeddings.reset_neo4j()  # the vectors go to the new id's episodes too
    return done


def pull(memory, reset: bool = False, max_seconds: float = 300.0):
    if memory.neo4j is None:
        raise BadQuery("neo4j is not configured: set ARS_NEO4J_URI (see README, Running a team)")
    if reset:
        memory.sync.pull.reset()
    return memory.sync.pull.run(max_seconds=max_seconds)


def enrich_pending(memory, settings, limit: int | None = None) -> tuple[int, int]:
    if not settings.openai_base_url and not settings.openai_api_key:
        raise BadQuery("no model configured: set ARS_OPENAI_BASE_URL (and OPENAI_API_KEY if it needs one)")
    from core.enrich.llm import enrich_pending as enrich

    result = enrich(memory, settings, store=memory.store, limit=limit)
    memory.sync_neo4j(retries=0)
    return result


def rebuild(memory, progress=None) -> int:
    path = memory.ledger.path
    if not path.exists():
        raise BadQuery(f"no ledger at {path}: nothing to rebuild from")
    if not path.is_file():
        raise BadQuery(f"{path} is not a file: move it aside and restore the ledger from a backup; "
                       "memory.sqlite was left as it is")
    return memory.rebuild_sqlite(progress)
