"""Deferred ledger consumers: the Neo4j push, the team pull, embeddings."""
