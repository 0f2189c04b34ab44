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
"""

from __future__ import annotations

import re
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Iterable, Mapping, Sequence

from core.infra.breaker import CircuitBreaker, CircuitOpen
from core.models import Episode, TierReport
from core.memory.scoring import Candidate, Query, TermString, score_candidates
from core.memory.context import CONTEXT_NEIGHBOURS, context_of, order_key
from core.memory.text import index_text
from core.memory.tiers.base import DeadlineExceeded, Lookup, guarded, one_line
from core.team.graph import RESOLVE, named, clear_host, migrate, migrate_keys

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
# The context field's scores count this much against the own terms'. Lucene
# normalises each field by its own length, which already discounts the longer
# context field: on LoCoMo dev 1.0 beat 0.5 (neo4j R@10 79.2 vs 76.4, 95 % CI
# +1.5 to +4.0, all 5 conversations; 0.3: 73.7) and 1.5 was no better (78.7).
CONTEXT_WEIGHT = 1.0
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

# One statement per batch. The batch's distinct entities and topics are MERGEd
# once and collected into lists; each episode row names its mentions and tags
# by position in those lists, so an edge costs no index lookup (a lookup per
# edge, against entities and topics that thousands of episodes share, was most
# of the server's time). An upsert replaces an episode's mentions and tags: the
# old edges go first, so the new ones are CREATEd. ``collect`` keeps the order
# of the rows it is given (UNWIND order), which the positions rely on.
#
# Lock order: hosts pushing at once share the namespace's entities and topics
# (the popular ones are in nearly every batch), and creating an edge locks its
# nodes. Locked in the order the edges came, two batches deadlocked: the
# server aborted one (bench/team_sync.py saw it several times a run, and each
# abort opened the pushing host's breaker for a cooldown). So every batch
# first takes a write lock on each of its entities, then each of its topics,
# in one global order (GraphBatch.of sorts both lists by key; ``SET`` then
# ``REMOVE`` of a property takes the lock and leaves the node as it was):
# two batches that share nodes now wait for each other instead of deadlocking.
UPSERT_BATCH = """
CALL () {
  UNWIND $entities AS x
  MERGE (n:Entity {namespace: $ns, key: x.key}) ON CREATE SET n.name = x.name, n.type = x.type
  SET n._lock = true REMOVE n._lock
  RETURN collect(n) AS ents
}
CALL () {
  UNWIND $topics AS name
  MERGE (t:Topic {namespace: $ns, name: name})
  SET t._lock = true REMOVE t._lock
  RETURN collect(t) AS tags
}
UNWIND $rows AS r
CALL (r) {
  // written before hosts were recorded, with this id: this host's now (the README's
  // `ars sync backfill` after an upgrade), instead of a second node beside it
  OPTIONAL MATCH (old:Episode {namespace: $ns, team_id: r.id}) WHERE old.host IS NULL
  SET old.host = $host
}
MERGE (e:Episode {namespace: $ns, host: $host, id: r.id})
// its name in the team, given once: the id, unless another host's episode has it already
SET e.team_id = CASE WHEN e.team_id IS NOT NULL THEN e.team_id
                     WHEN NOT EXISTS { MATCH (o:Episode {namespace: $ns, team_id: r.id}) } THEN r.id
                     WHEN NOT EXISTS { MATCH (o:Episode {namespace: $ns, team_id: r.id + '@' + $host}) }
                       THEN r.id + '@' + $host
                     ELSE r.id + '@' + $host + '#' + substring(randomUUID(), 0, 8) END
SET e += r.props
WITH e, r, ents, tags
CALL (e) {
  MATCH (e)-[old:MENTIONS|TAGGED]->()
  DELETE old
}
CALL (e, r, ents) {
  UNWIND r.mentions AS i
  WITH e, ents[i] AS n
  CREATE (e)-[:MENTIONS {namespace: $ns}]->(n)
}
CALL (e, r, tags) {
  UNWIND r.topics AS i
  WITH e, tags[i] AS t
  CREATE (e)-[:TAGGED {namespace: $ns}]->(t)
}
// the episodes of this batch whose id another host had first: the caller pulls
// that host's episode again under its qualified name (core/consumers/team_pull.py partners)
WITH e WHERE e.team_id <> e.id
RETURN collect(e.id) AS renamed
"""
# ``hosts``: who wrote the relation, so a host's ``backfill --clear`` removes
# the relations only its episodes gave, and keeps the ones another host gave too.
UPSERT_RELATIONS = """
UNWIND $rows AS r
MERGE (a:Entity {namespace: $ns, key: r.src_key}) ON CREATE SET a.name = r.src, a.type = 'concept'
MERGE (b:Entity {namespace: $ns, key: r.dst_key}) ON CREATE SET b.name = r.dst, b.type = 'concept'
MERGE (a)-[x:RELATES {rel: r.rel, namespace: $ns}]->(b)
SET x.hosts = CASE WHEN $host IN coalesce(x.hosts, []) THEN x.hosts ELSE coalesce(x.hosts, []) + $host END
"""
# A neighbour that arrived later changed the context of episodes already here.
UPDATE_CONTEXT = """
UNWIND $rows AS r
MATCH (e:Episode {namespace: $ns, host: $host, id: r.id})
SET e.context = r.context
"""
UPSERT_FOLLOWS = """
UNWIND $rows AS r
MATCH (a:Episode {namespace: $ns, host: $host, id: r.prev}), (b:Episode {namespace: $ns, host: $host, id: r.id})
MERGE (a)-[:FOLLOWED_BY {namespace: $ns}]->(b)
"""
# A host's pushes, for the pull of the others: the highest seq it pushed. The
# fence is the last ledger event it pushed (where it starts, and its id): a
# copy of this state directory, which shares its instance, is caught when its
# own ledger has another event there (core/team/claim.py).
UPSERT_HOST = """
MERGE (h:Host {namespace: $ns, name: $host})
SET h.seq = CASE WHEN h.seq IS NULL OR h.seq < $seq THEN $seq ELSE h.seq END, h.last_push = $at,
    h.fence_at = coalesce($fence_at, h.fence_at), h.fence_id = coalesce($fence_id, h.fence_id)
"""
# Inside every write of a claimed store, first: lock this host's claim and
# read it, so a copy of this state directory pushing at the same moment
# waits, then finds the fence moved and is refused before it writes.
CHECK_CLAIM = """
MATCH (h:Host {namespace: $ns, name: $host})
SET h._lock = true REMOVE h._lock
RETURN h.instance AS instance, h.fence_at AS fence_at, h.fence_id AS fence_id
"""


# One round trip: full-text candidates, entities named in the query, and a
# bounded one-hop expansion through the entities the best hits share with it.
# An entity in more than ``max_degree`` episodes says little about any one of
# them, and walking its mentions would cost more than the whole text search,
# so expansion skips it (a degree count is a constant-time lookup).
SEARCH = """
CALL () {
  CALL db.index.fulltext.queryNodes('episode_terms', $lucene, {limit: $limit}) YIELD node, score
  RETURN node AS e, score AS own, 0.0 AS ctx
  UNION ALL
  CALL db.index.fulltext.queryNodes('episode_terms', $lucene_ctx, {limit: $limit}) YIELD node, score
  RETURN node AS e, 0.0 AS own, score * $ctx_weight AS ctx
}
WITH e, sum(own) AS own, sum(ctx) AS ctx
ORDER BY own + ctx DESC LIMIT $limit
WITH collect({e: e, s: own + ctx, c: ctx}) AS text_hits
CALL () {
  CALL db.index.fulltext.queryNodes('entity_name', $entity_q, {limit: 100}) YIELD node AS ent
  WITH ent WHERE ent.namespace = $ns AND size(ent.key) >= 2 AND $qlow CONTAINS ent.key
  RETURN collect(ent) AS named
}
WITH text_hits, named, [h IN text_hits[..3] | h.e] AS best
CALL (named, best, text_hits) {
  UNWIND named AS ent
  WITH ent WHERE COUNT { (ent)<-[:MENTIONS]-() } <= $max_degree
  MATCH (b:Episode)-[:MENTIONS]->(ent)<-[:MENTIONS]-(other:Episode)
  WHERE b IN best AND other.namespace = $ns AND NOT other IN [h IN text_hits | h.e]
    AND ($hosts IS NULL OR other.host IN $hosts) AND ($agents IS NULL OR other.agent IN $agents)
  WITH DISTINCT other LIMIT $expand
  RETURN collect({e: other, s: 0.0, c: 0.0}) AS expanded
}
UNWIND text_hits + expanded AS h
WITH h.e AS e, h.s AS s, h.c AS c
RETURN """ + named("e") + """ AS id, s AS score, c AS context, e.summary AS summary, e.text AS text, e.terms AS terms,
       e.source AS source, coalesce(e.last_ts, e.first_ts) AS ts, e.host AS host, e.agent AS agent,
       [(e)-[:MENTIONS]->(n) | [n.name, n.type]] AS entities
"""

_LUCENE_SPECIAL = re.compile(r'([+\-!(){}\[\]^"~*?:\\/&|])')
MAX_QUERY_TERMS = 512  # Lucene's default clause limit is 1024
CANDIDATE_FACTOR = 4
MIN_CANDIDATES = 50
EXPAND = 20
EXPAND_MAX_DEGREE = 200
WRITE_BATCH = 1000  # episodes per write transaction
TEAM_ID_RETRIES = 3  # reruns of a write whose new episode's team name another host took meanwhile
DEADLOCK_RETRIES = 8  # reruns of a schema statement or write transaction the server aborted for a deadlock
PROBE_QUERIES = 30  # enough for a restarted JVM to compile the search path


@contextmanager
def _without_dataframes():
    """Import the driver without numpy and pandas. The driver imports them if
    they are installed, to accept arrays and data frames as parameters; ARS
    passes neither, and numpy alone was half the driver's import (~180 ms of
    every fresh process with Neo4j configured). Blocked only while the driver
    loads and only if not loaded already: later imports of numpy work."""
    blocked = [m for m in ("numpy", "pandas") if m not in sys.modules]
    for m in blocked:
        sys.modules[m] = None  # type: ignore[assignment]  # "import numpy" raises ImportError
    try:
        yield
    finally:
        for m in blocked:
            if sys.modules.get(m, 0) is None:
                del sys.modules[m]


def stamp(props: dict[str, Any], namespace: str, host: str, seq: int, agent: str = "",
          instance: str = "") -> dict[str, Any]:
    """An episode's node properties with where it was written: its namespace,
    host, agent (else ARS_AGENT, else the transcript's source), ``seq`` and the
    instance (the state directory) that wrote it. ``host`` is part of the
    node's key, so a store with no host id writes ``""``, never null."""
    return {**props, "namespace": namespace, "host": host or "",
            "agent": props.get("agent") or agent or props.get("source") or "", "seq": seq,
            "instance": instance or None}


def _utcnow() -> str:
    from datetime import timezone

    return datetime.now(timezone.utc).isoformat(timespec="seconds")


BOOKMARKS_MAX_AGE = 600.0  # seconds: older bookmarks are long since applied everywhere


def routing_bookmarks_file(uri: str, path: "str | None") -> "str | None":
    """Where a routing (``neo4j://``) store keeps its last write's bookmarks;
    None for ``bolt://`` (one server: every read sees every commit)."""
    return path if path and uri.split(":", 1)[0].startswith("neo4j") else None


def load_bookmarks(path: "str | None") -> list[str]:
    import json
    import os
    import time

    if not path:
        return []
    try:
        if time.time() - os.stat(path).st_mtime > BOOKMARKS_MAX_AGE:
            return []
        data = json.loads(open(path).read())
        return [b for b in data if isinstance(b, str)] if isinstance(data, list) else []
    except (OSError, ValueError):
        return []


def save_bookmarks(path: "str | None", manager) -> None:
    if not path:
        return
    import json

    from core.infra.fsutil import atomic_write

    try:
        values = sorted(str(b) for b in manager.get_bookmarks())
        atomic_write(path, json.dumps(values))
    except Exception:  # noqa: BLE001 - a lost bookmark costs read-your-writes on a cluster, never data
        pass


def lucene_quote(term: str) -> str:
    """A term as a quoted Lucene phrase with special characters escaped."""
    return '"' + _LUCENE_SPECIAL.sub(r"\\\1", term) + '"'


def _ts(value: Any) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value
    try:
        return datetime.fromisoformat(str(value))
    except ValueError:
        return None


def episode_props(ep: Episode, terms: str | None = None, context: str = "") -> dict[str, Any]:
    """Node properties; ``terms`` when the caller has them already (the same
    ``index_text`` SQLite stored for this version)."""
    return {
        "context": context,
        "source": ep.source,
        "session_id": ep.session_id,
        "agent": ep.agent,
        "channel": ep.channel,
        "summary": ep.summary,
        "text": ep.text,
        "topics": ep.topics,
        "terms": index_text(ep.search_text()) if terms is None else terms,
        "first_ts": ep.first_ts.isoformat() if ep.first_ts else None,
        "last_ts": ep.last_ts.isoformat() if ep.last_ts else None,
        "message_count": ep.message_count,
    }


@dataclass
class GraphBatch:
    """The parameters of one write transaction (see ``UPSERT_BATCH``). Building
    them (index terms, de-duplication) is pure Python, so the sync worker builds
    the next batch while the server commits this one."""

    episodes: list[dict[str, Any]]  # id, props, mentions and topics as positions in the lists below
    entities: list[dict[str, str]]  # distinct by key: the first name and type seen
    topics: list[str]
    relations: list[dict[str, str]]
    follows: list[dict[str, str]]
    seqs: dict[str, int] = field(default_factory=dict)  # episode id -> its place in this host's push order
    fence: "tuple[int, str] | None" = None  # the last ledger event pushed with it: (where it starts, its id)
    contexts: list[dict[str, str]] = field(default_factory=list)  # id, context: stored neighbours' new contexts

    def __len__(self) -> int:
        return len(self.episodes)

    @classmethod
    def of(cls, eps: Sequence[Episode], terms: Mapping[str, str] | None = None,
           contexts: Mapping[str, str] | None = None) -> "GraphBatch":
        """Rows for episodes with distinct ids; ``terms``: episode id -> index
        terms already computed for that version; ``contexts``: episode id ->
        its session context (SQLite's, for these episodes and their stored
        neighbours). Without ``contexts`` the batch works them out among its
        own episodes."""
        terms = dict(terms or {})
        if contexts is None:
            for e in eps:
                if e.id not in terms:
                    terms[e.id] = index_text(e.search_text())
            contexts = batch_contexts(eps, terms)
        ids = {e.id for e in eps}
        # the distinct entities (the first name and type seen) and topics,
        # then sorted: the write locks them in this order (see UPSERT_BATCH)
        first: dict[str, dict[str, str]] = {}
        for e in eps:
            for ent in e.entities:
                first.setdefault(ent.name.lower(), {"key": ent.name.lower(), "name": ent.name, "type": ent.type})
        relations = [{"src": r.src, "dst": r.dst, "rel": r.rel, "src_key": r.src.lower(), "dst_key": r.dst.lower()}
                     for e in eps for r in e.relations]
        for r in relations:  # locked with the others (UPSERT_RELATIONS MERGEs them as concepts too)
            first.setdefault(r["src_key"], {"key": r["src_key"], "name": r["src"], "type": "concept"})
            first.setdefault(r["dst_key"], {"key": r["dst_key"], "name": r["dst"], "type": "concept"})
        entities = [first[k] for k in sorted(first)]
        entity_at = {x["key"]: i for i, x in enumerate(entities)}
        topics = sorted({t for e in eps for t in e.topics if t})
        topic_at = {t: i for i, t in enumerate(topics)}
        rows: list[dict[str, Any]] = []
        for e in eps:
            # positions, once each (the write CREATEs the edges), in the episode's own order
            mentions = dict.fromkeys(entity_at[ent.name.lower()] for ent in e.entities)
            tags = dict.fromkeys(topic_at[t] for t in e.topics if t)
            rows.append({"id": e.id, "props": episode_props(e, terms.get(e.id), contexts.get(e.id, "")),
                         "mentions": list(mentions), "topics": list(tags)})
        return cls(
            episodes=rows,
            entities=entities,
            topics=topics,
            relations=relations,
            follows=[{"id": e.id, "prev": e.meta["prev"]} for e in eps if e.meta.get("prev")],
            contexts=[{"id": i, "context": c} for i, c in contexts.items() if i not in ids],
        )


def _again_after_deadlock(fn):
    """``fn()``, run again when the server aborted it for a deadlock. Hosts
    starting together against a new graph create the same constraints and
    indexes at once, and their schema locks deadlock: the server aborts one.
    That is not an outage, but it failed the push and opened the circuit
    breaker, which then held that host's push and pull for its 5 s cooldown,
    again and again while the hosts started (most of the first minute of
    bench/team_sync.py). Rerun after a short random pause instead; other
    errors, and a deadlock that persists, raise. The driver's own retries are
    off (``max_transaction_retry_time=0``: reads must fail fast)."""
    import random
    import time

    from neo4j.exceptions import TransientError

    for attempt in range(DEADLOCK_RETRIES + 1):
        try:
            return fn()
        except TransientError as exc:
            if "Deadlock" not in (exc.code or "") or attempt == DEADLOCK_RETRIES:
                raise
            time.sleep(random.uniform(0.05, 0.25) * (attempt + 1))


def is_transient(exc: BaseException) -> bool:
    """Whether the server refused a transaction for a passing reason (a
    deadlock that outlived its reruns, a lock or memory limit) rather than
    being unreachable: worth retrying, and no reason to open the breaker,
    which would hold this host's push and pull for a whole cooldown."""
    from neo4j.exceptions import TransientError

    return isinstance(exc, TransientError)


def batch_contexts(eps: Sequence[Episode], terms: Mapping[str, str]) -> dict[str, str]:
    """Session contexts among a batch's own episodes (when SQLite cannot say)."""
    sessions: dict[str, list[Episode]] = {}
    for e in eps:
        if e.session_id:
            sessions.setdefault(e.session_id, []).append(e)
    out: dict[str, str] = {}
    n = CONTEXT_NEIGHBOURS
    for members in sessions.values():
        members.sort(key=lambda e: order_key(e.first_ts, e.last_ts))  # stable: arrival order among equals
        for i, e in enumerate(members):
            out[e.id] = context_of([terms[x.id] for x in members[max(0, i - n):i]],
                                   [terms[x.id] for x in members[i + 1:i + 1 + n]])
    return out


class Neo4jStore:
    name = "neo4j"

    def __init__(self, uri: str, user: str = "neo4j", password: str | None = None,
                 database: str | None = None, connect_timeout: float = 1.0,
                 breaker_cooldown: float = 5.0, namespace: str = "default", host: str = "", agent: str = "",
                 bookmarks_path: "str | None" = None):
        with _without_dataframes():
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

    # -- plumbing -------------------------------------------------------------
    def _run(self, cypher: str, timeout: float | None = None, write: bool = False, **params: Any) -> list[dict]:
        from neo4j import Query as CypherQuery

        q = CypherQuery(cypher, timeout=timeout)
        params.setdefault("ns", self.namespace)
        params.setdefault("me", self.host)  # named(): this host's own episodes are named by their id
        with self._driver.session(database=self.database, default_access_mode="WRITE" if write else "READ",
                                  bookmark_manager=self._bookmarks) as s:
            return s.run(q, params).data()

    def _rows(self, cypher: str, timeout: float | None = None, **params: Any) -> list[dict]:
        """``_run`` for rows of plain values (no nodes, relationships or paths):
        each record as a dict of the values the driver decoded, without
        ``data()``'s recursive walk over every nested list, which was an eighth
        of a pull's client time."""
        from neo4j import Query as CypherQuery

        params.setdefault("ns", self.namespace)
        params.setdefault("me", self.host)  # named(): this host's own episodes are named by their id
        with self._driver.session(database=self.database, default_access_mode="READ",
                                  bookmark_manager=self._bookmarks) as s:
            result = s.run(CypherQuery(cypher, timeout=timeout), params)
            keys = result.keys()
            return [dict(zip(keys, values)) for values in result.values()]

    def _run_within(self, cypher: str, timeout: float, **params: Any) -> list[dict]:
        """``_run`` with a server-side timeout that reports as a deadline."""
        from neo4j.exceptions import ClientError

        try:
            return self._run(cypher, timeout=timeout, **params)
        except ClientError as exc:
            if "TimedOut" in (exc.code or ""):
                raise DeadlineExceeded(f"neo4j query passed its {timeout * 1000:.0f} ms deadline") from exc
            raise

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
            _again_after_deadlock(lambda: self._run(stmt, write=True))
        except ClientError as exc:
            if not (exc.code or "").endswith(("EquivalentSchemaRuleAlreadyExists", "IndexAlreadyExists",
                                               "ConstraintAlreadyExists")):
                raise

    def _probe(self) -> None:
        """The breaker's background probe: is the server back, and warm enough
        to answer inside a read deadline? Raises while it is not."""
        self._schema_ready = False  # a new server may have lost nothing, or everything
        self.ensure_schema()
        for _ in range(PROBE_QUERIES):
            self._run(SEARCH, timeout=10, lucene=self._lucene('terms:"warm"', None),
                      lucene_ctx=self._lucene('context:"warm"', None), ctx_weight=CONTEXT_WEIGHT,
                      entity_q='"warm"', qlow="warm", limit=10, expand=5, max_degree=EXPAND_MAX_DEGREE,
                      hosts=None, agents=None)

    def warm(self) -> None:
        """Plan the search query once, so the first recall is not the one that
        pays Cypher planning (hundreds of ms, more than a read deadline)."""
        try:
            self.ensure_schema()
            self._run(SEARCH, timeout=30, lucene=self._lucene('terms:"warm"', None),
                      lucene_ctx=self._lucene('context:"warm"', None), ctx_weight=CONTEXT_WEIGHT,
                      entity_q='"warm"', qlow="warm", limit=1, expand=1, max_degree=EXPAND_MAX_DEGREE,
                      hosts=None, agents=None)
        except Exception:  # noqa: BLE001 - warming is best effort; search reports failures
            pass

    # -- writes -------------------------------------------------------------------
    def upsert(self, episodes: Iterable[Episode], batch: int = WRITE_BATCH, seq: int = 0) -> int:
        """MERGE episodes with their entities, topics, relations and order;
        searchable when it returns. ``seq``: their place in this host's push
        order (the ledger offset they stand for; the pull reads by it)."""
        eps = list({e.id: e for e in episodes}.values())  # one version per id: the last
        for i in range(0, len(eps), batch):
            b = GraphBatch.of(eps[i : i + batch])
            b.seqs = {e.id: seq for e in eps[i : i + batch]}
            self.write(b)
        if eps:
            self.refresh_index()
        return len(eps)

    def write(self, batch: "GraphBatch") -> list[str]:
        """One write transaction for a prepared batch. Returns the ids of its
        episodes that another host's episode had first (named ``id@host`` in
        the team: core/team/names.py). A claimed store first checks its claim
        in the same transaction (HostClaimed: nothing written)."""
        self.ensure_schema()

        ns = self.namespace
        stamped = [{**r, "props": stamp(r["props"], ns, self.host, batch.seqs.get(r["id"], 0), self.agent,
                                        self.instance)}
                   for r in batch.episodes]
        top = max((r["props"]["seq"] for r in stamped), default=None)
        fence = batch.fence
        renamed: list[str] = []

        def work(tx) -> None:
            renamed.clear()
            if self.instance:
                self._check_claim(tx)
            got = tx.run(UPSERT_BATCH, rows=stamped, entities=batch.entities, topics=batch.topics, ns=ns,
                         host=self.host).single()
            renamed.extend(got["renamed"] if got else [])
            if top is not None and self.host:
                tx.run(UPSERT_HOST, ns=ns, host=self.host, seq=top, at=_utcnow(),
                       fence_at=fence[0] if fence else None, fence_id=fence[1] if fence else None).consume()
            for cypher, rows in ((UPSERT_RELATIONS, batch.relations), (UPSERT_FOLLOWS, batch.follows),
                                 (UPDATE_CONTEXT, batch.contexts)):
                if rows:
                    tx.run(cypher, rows=rows, ns=ns, host=self.host).consume()

        self._write_retrying(work)
        if fence is not None and self.instance:
            self.fence = fence  # what the next write expects to find
        save_bookmarks(self._bookmarks_file, self._bookmarks)
        return list(renamed)

    def _check_claim(self, tx) -> None:
        """Inside a write: this host's claim is still this store's instance and
        its fence where this store left it; else raise HostClaimed (the
        transaction rolls back: nothing of it is written)."""
        from core.team.identity import HostClaimed

        row = tx.run(CHECK_CLAIM, ns=self.namespace, host=self.host).single()
        if row is None or row["instance"] != self.instance:
            raise HostClaimed(f"host id {self.host!r} in namespace {self.namespace!r} is no longer claimed by "
                              f"this state directory (instance {self.instance}): run `ars sync status` to see who holds it")
        if self.fence is not None and (row["fence_at"], row["fence_id"]) != tuple(self.fence):
            raise HostClaimed(f"another state directory with this one's instance ({self.instance}) pushed as host "
                              f"{self.host!r} in namespace {self.namespace!r} meanwhile: one is a copy of the other; "
                              "give one of them its own host id with `ars sync run --rename NEW`")

    def _write_retrying(self, work) -> None:
        """A write transaction, in a session carrying this store's bookmarks.
        Two hosts creating an episode of the same id at the same moment both
        find its team name free; the second commit breaks the uniqueness of
        ``team_id`` and is run again, and then names its episode ``id@host``."""
        from neo4j.exceptions import ConstraintError

        def once() -> None:
            with self._driver.session(database=self.database, bookmark_manager=self._bookmarks) as s:
                s.execute_write(work)

        for attempt in range(TEAM_ID_RETRIES + 1):
            try:
                _again_after_deadlock(once)
                return
            except ConstraintError as exc:
                if "team_id" not in str(exc) or attempt == TEAM_ID_RETRIES:
                    raise

    def refresh_index(self) -> None:
        """Wait until the eventually consistent full-text index holds every commit."""
        self._run("CALL db.index.fulltext.awaitEventuallyConsistentIndexRefresh()", write=True)

    def clear(self) -> None:
        """Delete every node (tests and benchmarks). Edges go first, in batches
        of their own: a batch of nodes that DETACH DELETEs entities mentioned
        by tens of thousands of episodes outgrew the server's transaction
        memory (512 MiB) at 100k episodes."""
        for cypher in ("MATCH ()-[r]->() WITH r LIMIT 20000 DELETE r RETURN count(*) AS c",
                       "MATCH (n) WITH n LIMIT 10000 DETACH DELETE n RETURN count(*) AS c"):
            while self._run(cypher, write=True)[0]["c"]:
                pass

    def clear_mine(self, host: str | None = None, release: bool = False) -> int:
        """Delete this host's episodes in this namespace (what ``ars sync
        backfill --clear`` rebuilds), the relations only they gave, and the
        entities and topics only they held; returns the episodes deleted.
        Other hosts' episodes, and anything another host's episode still
        holds, are untouched; so are nodes from before hosts were recorded
        (nobody's provably: a backfill adopts those with this host's ids).
        The claim stays (``release``: it goes too, for ``--rename``); the
        push order starts over. ``host``: another host id this store's
        instance holds (the old one, on a rename)."""
        host = self.host if host is None else host
        if self.instance and host == self.host:
            self._write_retrying(self._check_claim)  # the claim and fence, before anything is deleted
        n = clear_host(self, host, release)
        if host == self.host:
            self.fence = None
        return n

    def count(self) -> int:
        """Episodes of this namespace (an index count)."""
        return self._run("MATCH (e:Episode) WHERE e.namespace = $ns RETURN count(e) AS c")[0]["c"]

    def has(self, episode_id: str) -> bool:
        """Whether this namespace holds the episode this host calls ``episode_id``."""
        from core.team.names import split_name

        qid, qhost = split_name(episode_id)
        rows = self._run("UNWIND [{name: $name, qid: $qid, qhost: $qhost}] AS r" + RESOLVE
                         + "RETURN e IS NOT NULL AS found", name=episode_id, qid=qid, qhost=qhost)
        return bool(rows and rows[0]["found"])

    # -- the tier protocol --------------------------------------------------------
    def _guard(self, fn) -> TierReport:
        """Breaker around ``fn``; connection-level failures report ``down``."""
        from neo4j.exceptions import DriverError, ServiceUnavailable, SessionExpired

        def call() -> TierReport:
            self.breaker.before_call()
            try:
                report = fn()
            except DeadlineExceeded as exc:
                self.breaker.failure(one_line(exc), hard=False)
                raise
            except (ServiceUnavailable, SessionExpired, DriverError, OSError) as exc:
                self.breaker.failure(one_line(exc))
                raise
            self.breaker.success()
            return report

        return guarded(self.name, call, (CircuitOpen, ServiceUnavailable, SessionExpired, DriverError, OSError))

    def search(self, q: Query, k: int, deadline: float) -> TierReport:
        return self._guard(lambda: self._search(q, k, deadline))

    def health(self) -> TierReport:
        def probe() -> TierReport:
            n = self._run("MATCH (e:Episode) WHERE e.namespace = $ns RETURN count(e) AS c", timeout=2.0)[0]["c"]
            return TierReport(tier=self.name, status="ok" if n else "empty", error=f"{n} episodes")
        return self._guard(probe)

    def lookup(self, q: Query, episode_id: str, deadline: float) -> Lookup:
        self.breaker.before_call()
        if not self.has(episode_id):
            return Lookup(stored=False)
        hits, n = self._ranked(q, 100_000, deadline, None)
        for h in hits:
            if h.episode_id == episode_id:
                return Lookup(True, h.score, h.rank, None, n, breakdown=dict(h.breakdown))
        return Lookup(True, None, None, [], n)

    def _lucene(self, text_query: str, scope) -> str:
        """``text_query`` inside this namespace (and scope): required clauses
        with boost 0, so they filter without moving any score."""
        must = [f"+namespace:{lucene_quote(self.namespace)}^0"]
        if scope is not None and scope.hosts:
            must.append("+host:(" + " ".join(lucene_quote(h) for h in sorted(scope.hosts)) + ")^0")
        if scope is not None and scope.agents:
            must.append("+agent:(" + " ".join(lucene_quote(a) for a in sorted(scope.agents)) + ")^0")
        return " ".join(must) + f" +({text_query})"

    def _search(self, q: Query, k: int, deadline: float) -> TierReport:
        hits, n = self._ranked(q, max(k * CANDIDATE_FACTOR, MIN_CANDIDATES), deadline, k)
        return TierReport(tier=self.name, status="ok" if hits else "empty", hits=hits, candidates=n)

    def _ranked(self, q: Query, limit: int, deadline: float, k: int | None):
        import time

        terms = q.terms[:MAX_QUERY_TERMS]
        if not terms:
            return [], 0
        budget = deadline - time.monotonic()
        if budget <= 0:
            raise DeadlineExceeded("no time left before the neo4j deadline")
        surface = [t for t in q.tokens if len(t) >= 2][:MAX_QUERY_TERMS] or q.tokens[:1]
        scope = getattr(q, "scope", None)
        quoted = " ".join(lucene_quote(t) for t in terms)
        rows = self._run_within(
            SEARCH,
            timeout=max(budget, 0.01),
            lucene=self._lucene(f"terms:({quoted})", scope),
            lucene_ctx=self._lucene(f"context:({quoted})", scope),
            ctx_weight=CONTEXT_WEIGHT,
            hosts=sorted(scope.hosts) if scope and scope.hosts else None,
            agents=sorted(scope.agents) if scope and scope.agents else None,
            entity_q=" ".join(lucene_quote(t) for t in surface) or '""',
            qlow=q.text.lower(),
            limit=limit,
            expand=EXPAND,
            max_degree=EXPAND_MAX_DEGREE,
        )
        cands = [
            Candidate(
                episode_id=r["id"],
                text="\n".join(p for p in (r["summary"], r["text"]) if p),
                native=float(r["score"]),
                context=float(r["context"] or 0.0),
                terms=TermString(r["terms"] or ""),
                entities=[(n, t or "concept") for n, t in r["entities"]],
                ts=_ts(r["ts"]),
                source=r["source"] or "",
            )
            for r in rows
            if r["id"] is not None
        ]
        hits = score_candidates(q, self.name, "lucene", cands, k=k)
        origin = {r["id"]: {"namespace": self.namespace, "host": r["host"] or "", "agent": r["agent"] or r["source"] or ""}
                  for r in rows if r["id"] is not None}
        for h in hits:
            h.origin = origin.get(h.episode_id, {})
        return hits, len(cands)
