"""The Neo4j tier's search: one round trip of full-text candidates, entities
named in the query and a bounded one-hop expansion, scored by the shared
scorer; the tier protocol behind a circuit breaker.

The episode_terms index covers an episode's ``terms`` and its session
``context`` (core/memory/context.py); a search asks each field on its own and
adds the context field's scores times ``CONTEXT_WEIGHT``, so the score splits
exactly into the episode's own part and the context part (the breakdown's
``context``). Every value goes in as a parameter and every Lucene term is
quoted and escaped.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from core.infra.breaker import CircuitOpen
from core.memory.scoring import Candidate, Query, TermString, score_candidates
from core.memory.tiers.base import DeadlineExceeded, Lookup, guarded, one_line
from core.models import TierReport
from core.team.graph import RESOLVE, named

# The context field's scores count this much against the own terms'. Lucene
# normalises each field by its own length, which already discounts the longer
# context field: on LoCoMo dev 1.0 beat 0.5 (neo4j R@10 79.2 vs 76.4, 95 % CI
# +1.5 to +4.0, all 5 conversations; 0.3: 73.7) and 1.5 was no better (78.7).
CONTEXT_WEIGHT = 1.0
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
       [(e)-[:MENTIONS]->(n) | [n.name, n.type]] AS entities,
       e.id AS eid, e.seq AS seq, e.session_id AS session_id, e.channel AS channel, e.topics AS topics,
       e.first_ts AS first_ts, e.last_ts AS last_ts, e.message_count AS message_count, e.batch AS batch
"""

_LUCENE_SPECIAL = re.compile(r'([+\-!(){}\[\]^"~*?:\\/&|])')
MAX_QUERY_TERMS = 512  # Lucene's default clause limit is 1024
CANDIDATE_FACTOR = 4
MIN_CANDIDATES = 50
EXPAND = 20
EXPAND_MAX_DEGREE = 200
PROBE_QUERIES = 30  # enough for a restarted JVM to compile the search path


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


class Neo4jSearch:
    """The search half of a ``Neo4jStore`` (see store.py): the tier protocol,
    the breaker's probe and the warm-up."""

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
        hits, n, _left_out = self._ranked(q, 100_000, deadline, None)
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
        hits, n, left_out = self._ranked(q, max(k * CANDIDATE_FACTOR, MIN_CANDIDATES), deadline, k)
        note = (f"{left_out} answer{'s' * (left_out != 1)} left out: not what their host signed, or not "
                "pulled here yet" if left_out else "")
        return TierReport(tier=self.name, status="ok" if hits else "empty", hits=hits, candidates=n, error=note)

    def _vouched(self, rows: list[dict]) -> tuple[list[dict], int]:
        """The rows this host's SQLite vouches for (core/team/local.py ``vouched``):
        its own as its push wrote them, another host's as the pull verified them
        (signed by that host's pinned key). Anything else in the graph (an
        episode written there under some host's name, or altered there) is left
        out. A store no state directory stands behind (tests, benchmarks) has no
        ``vouch`` and keeps every row; with SQLite unreadable (Neo4j then answers in
        its place), only the rows in this host's name that its own key signed are
        kept (``own_signed``, given by the stores). Returns (kept, left out)."""
        if self.vouch is None or not rows:
            return rows, 0
        from core.team.digest import digest

        asked = [(r["id"], r["host"] or "", digest(self.namespace, r["host"] or "", r["eid"], r["seq"], r))
                 for r in rows if r["id"] is not None and r["eid"] is not None]
        try:
            ok = self.vouch(asked)
        except Exception:  # noqa: BLE001 - SQLite cannot say: this host's own signed answers only
            ok = self.own_signed(rows) if self.own_signed is not None else set()
        kept = [r for r in rows if r["id"] in ok]
        return kept, len(rows) - len(kept)

    def _ranked(self, q: Query, limit: int, deadline: float, k: int | None):
        import time

        terms = q.terms[:MAX_QUERY_TERMS]
        if not terms:
            return [], 0, 0
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
        rows, left_out = self._vouched(rows)
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
        return hits, len(cands), left_out
