"""``Neo4jStore``: the episode graph of one namespace, as this host sees it.

The class is put together from its jobs: the connection (connection.py),
the schema (schema.py), the writes (write.py) and the search (search.py);
this module opens the driver.
"""

from __future__ import annotations

import threading

from core.infra.breaker import CircuitBreaker
from core.memory.tiers.neo4j.connection import (Neo4jConnection, without_dataframes, load_bookmarks,
                                                routing_bookmarks_file)
from core.memory.tiers.neo4j.schema import Neo4jSchema
from core.memory.tiers.neo4j.search import Neo4jSearch
from core.memory.tiers.neo4j.write import Neo4jWrites


class Neo4jStore(Neo4jConnection, Neo4jSchema, Neo4jWrites, Neo4jSearch):
    name = "neo4j"

    def __init__(self, uri: str, user: str = "neo4j", password: str | None = None,
                 database: str | None = None, connect_timeout: float = 1.0,
                 breaker_cooldown: float = 5.0, namespace: str = "default", host: str = "", agent: str = "",
                 bookmarks_path: "str | None" = None):
        with without_dataframes():
            from neo4j import GraphDatabase  # imported here: core must import without a server

        self.uri = uri
        # every read and write of this store is inside one namespace (core/team/)
        self.namespace = namespace
        self.host = host
        self.agent = agent
        # The claim on ``host`` (core/team/claim.py): set by the sync once the
        # graph has it for this state directory's instance; every write then
        # checks, inside its transaction, that the claim and the fence still
        # are what this store left them. A store with no instance (tests,
        # benchmarks, an admin clearing the graph) writes unclaimed.
        self.instance = ""
        self.fence: "tuple[int, str] | None" = None
        self.refused = ""  # the claim's refusal in this process: other writers (the vector copy) stop too
        # This host's key (core/team/host_key.py), set with the claim: every write batch is
        # signed with it, and ``on_written(id -> digest)`` is told what went out, so
        # ``vouch`` (core/team/local.py, given by the stores) can tell, at recall, a
        # graph answer that is what its host wrote from one somebody else put there.
        self.host_key = None
        self.on_written = None
        self.vouch = None
        # rows -> the ids of those in this host's name that its own key signed (core/team/verify.py
        # ``signed_by``): with SQLite unreadable, all that recall keeps of the graph's answers
        self.own_signed = None
        self.notices: list[str] = []  # one line each, for the person (a graph migrated)
        # Causal consistency: every session of this driver carries the bookmarks
        # of the writes before it, so on a cluster (neo4j://) a read sent to a
        # reader waits for this host's own writes. Across processes (ars sync run,
        # then ars recall) the last write's bookmarks are kept in a state file.
        self._bookmarks_file = routing_bookmarks_file(uri, bookmarks_path)
        self._bookmarks = GraphDatabase.bookmark_manager(initial_bookmarks=load_bookmarks(self._bookmarks_file))
        self.database = database
        self.breaker = CircuitBreaker(cooldown=breaker_cooldown, probe=self._probe)
        auth = (user, password) if password else None
        self._driver = GraphDatabase.driver(
            uri,
            auth=auth,
            connection_timeout=connect_timeout,
            connection_acquisition_timeout=connect_timeout,
            max_transaction_retry_time=0,  # reads fail fast; writes retry in the sync worker
            max_connection_pool_size=32,
            liveness_check_timeout=30.0,
            notifications_min_severity="OFF",  # planner hints are not for the user
        )
        self._schema_ready = False
        self._schema_lock = threading.Lock()

    def close(self) -> None:
        self._driver.close()
