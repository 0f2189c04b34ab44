"""Neo4j tier: the episode graph, a ``cjk`` full-text index and entity matching.

Graph (DESIGN.md): ``(:Episode)-[:MENTIONS]->(:Entity)``, ``-[:TAGGED]->(:Topic)``,
``(:Episode)-[:FOLLOWED_BY]->(:Episode)``, ``(:Entity)-[:RELATES {rel}]->(:Entity)``.

The full-text index covers an episode's ``terms`` (the shared index terms:
stemmed English, CJK bigrams, already lowercase and space-separated) through
Lucene's ``whitespace`` analyzer, so Neo4j and SQLite match the same
vocabulary; a tokenising analyzer would only redo that work (``cjk`` cost a
fifth more server CPU per synced episode). Every value goes in as a parameter and every
Lucene term is quoted and escaped.

Session context (``core/memory/context.py``): the same index covers a second
property, ``context`` (the neighbours' terms, as in SQLite's context column).
A search asks each field on its own and adds the context field's scores times
``CONTEXT_WEIGHT``, so the score splits exactly into the episode's own part and
the context part (the breakdown's ``context``).

Fail fast: small connect and acquisition timeouts, no transaction retries on
reads, and a circuit breaker, so an outage costs milliseconds (the driver's
defaults wait about 60 s).

One job per module: connection.py (driver, bookmarks, query runners,
deadlock reruns), schema.py (constraints, indexes, upgrades), batch.py (what
one write carries), write.py (upserts, claims, clearing), search.py (the tier
protocol), store.py (``Neo4jStore``, put together from the others). The
team's naming rule in Cypher (``named``, ``RESOLVE``) is core/team/graph.py's.
"""

from core.memory.tiers.neo4j.batch import GraphBatch
from core.memory.tiers.neo4j.connection import is_transient
from core.memory.tiers.neo4j.schema import TERMS_ANALYZER
from core.memory.tiers.neo4j.store import Neo4jStore
from core.memory.tiers.neo4j.write import WRITE_BATCH

__all__ = ["GraphBatch", "Neo4jStore", "TERMS_ANALYZER", "WRITE_BATCH", "is_transient"]
