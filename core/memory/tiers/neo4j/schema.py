"""The Neo4j tier's schema: constraints, indexes, and the upgrade of a graph
an older ARS wrote (core/team/graph.py migrates its nodes)."""

from __future__ import annotations

import sys

from core.memory.tiers.neo4j.connection import again_after_deadlock
from core.team.graph import migrate, migrate_keys

TERMS_ANALYZER = "whitespace"
# The properties of the episode_terms index: the terms, the session context
# (core/memory/context.py), and namespace, host and agent, so a search filters on
# them inside Lucene (``+namespace:"x"^0``, no score), before its candidate
# limit, not after it.
INDEXED = ["terms", "context", "namespace", "host", "agent"]
# Constraints from before namespaces: ids were unique across the whole graph.
OLD_CONSTRAINTS = ("episode_id", "entity_key", "topic_name")
# From before hosts kept their own episodes: an id was unique in its namespace.
OLD_HOST_CONSTRAINT = "episode_ns_id"
SCHEMA = [
    # Namespaces are a hard boundary: an episode, entity and topic are unique within one.
    # An episode is its host's: two hosts writing the same id keep two nodes (core/team/names.py),
    # each with a name unique in the namespace, ``team_id`` (the id, or ``id@host`` when the id
    # was taken first by another host).
    "CREATE CONSTRAINT episode_ns_host_id IF NOT EXISTS FOR (e:Episode) REQUIRE (e.namespace, e.host, e.id) IS UNIQUE",
    "CREATE CONSTRAINT episode_ns_team_id IF NOT EXISTS FOR (e:Episode) REQUIRE (e.namespace, e.team_id) IS UNIQUE",
    "CREATE CONSTRAINT entity_ns_key IF NOT EXISTS FOR (n:Entity) REQUIRE (n.namespace, n.key) IS UNIQUE",
    "CREATE CONSTRAINT topic_ns_name IF NOT EXISTS FOR (t:Topic) REQUIRE (t.namespace, t.name) IS UNIQUE",
    "CREATE CONSTRAINT host_ns_name IF NOT EXISTS FOR (h:Host) REQUIRE (h.namespace, h.name) IS UNIQUE",
    # A host's signed batches of episodes (core/team/digest.py), read by id by the pull.
    "CREATE CONSTRAINT batch_ns_host_id IF NOT EXISTS FOR (b:Batch) REQUIRE (b.namespace, b.host, b.id) IS UNIQUE",
    # The pull reads one host's episodes in push order (core/consumers/team_pull.py):
    # seq, then id for ties, both in the index, so the index hands a page over
    # in its order and nothing is sorted (with seq alone the planner sometimes
    # chose to sort everything after the cursor for every page).
    "DROP INDEX episode_pull IF EXISTS",  # its older form, (namespace, host, seq)
    "CREATE INDEX episode_push_order IF NOT EXISTS FOR (e:Episode) ON (e.namespace, e.host, e.seq, e.id)",
    # Eventually consistent: Lucene applies updates after the commit instead of
    # inside it (several times faster bulk sync); upsert() waits for the
    # refresh, so what it wrote is searchable when it returns.
    "CREATE FULLTEXT INDEX episode_terms IF NOT EXISTS FOR (e:Episode) ON EACH [" + ", ".join(f"e.{p}" for p in INDEXED) + "]"
    " OPTIONS {indexConfig: {`fulltext.analyzer`: '" + TERMS_ANALYZER + "', `fulltext.eventually_consistent`: true}}",
    "CREATE FULLTEXT INDEX entity_name IF NOT EXISTS FOR (n:Entity) ON EACH [n.name]"
    " OPTIONS {indexConfig: {`fulltext.analyzer`: 'cjk', `fulltext.eventually_consistent`: false}}",
]


class Neo4jSchema:
    """Creates the schema of a ``Neo4jStore`` once per server (see store.py)."""

    def ensure_schema(self) -> None:
        with self._schema_lock:
            if self._schema_ready:
                return
            # a graph from an older ARS indexed terms with another analyzer: rebuild that index
            # (IF NOT EXISTS would keep it, and queries would go through a different analyzer)
            # (or over other properties: the context, the namespace): rebuild that index
            found = self._run("SHOW FULLTEXT INDEXES YIELD name, options, properties"
                              " WHERE name = 'episode_terms' RETURN options, properties")
            rebuilt = bool(found) and (
                (found[0]["options"] or {}).get("indexConfig", {}).get("fulltext.analyzer") != TERMS_ANALYZER
                or list(found[0]["properties"] or []) != INDEXED)
            if rebuilt:
                self._run("DROP INDEX episode_terms", write=True)
            # a graph from before namespaces: its nodes are namespace default (core/team/graph.py)
            # an index without the namespace field is an older graph's too
            for line in migrate(self, OLD_CONSTRAINTS, force="namespace" not in (found[0]["properties"] or [])
                                if found else False):
                self.notices.append(line)
                print(f"ars: {line}", file=sys.stderr)  # once: the migration runs while old constraints exist
            # episodes keyed by host: team names for the existing ones
            migrate_keys(self, OLD_HOST_CONSTRAINT)
            for stmt in SCHEMA:
                self._create_schema(stmt)
            self._run("CALL db.awaitIndexes(300)", write=True)
            self._schema_ready = True

    def _create_schema(self, stmt: str) -> None:
        """One ``CREATE ... IF NOT EXISTS``. Hosts starting together against a
        new graph race to create the same index: the loser is told an
        equivalent one already exists, which is what it wanted."""
        from neo4j.exceptions import ClientError

        try:
            again_after_deadlock(lambda: self._run(stmt, write=True))
        except ClientError as exc:
            if not (exc.code or "").endswith(("EquivalentSchemaRuleAlreadyExists", "IndexAlreadyExists",
                                               "ConstraintAlreadyExists")):
                raise
