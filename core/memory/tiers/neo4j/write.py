"""The Neo4j tier's writes: one statement per batch (``UPSERT_BATCH``), the
host's push order and fence, the claim checked inside every write, reruns
of a team name taken meanwhile, and the clearing of a host's episodes."""

from __future__ import annotations

from datetime import datetime
from typing import Iterable

from core.memory.tiers.neo4j.batch import GraphBatch, stamp
from core.memory.tiers.neo4j.connection import again_after_deadlock, save_bookmarks
from core.models import Episode
from core.team import digest as team_digest
from core.team.graph import clear_host

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
# The signature of a batch by this host's key (core/team/digest.py): its
# episodes' ids and digests, checked by every peer that pulls them.
UPSERT_SIGNED = """
MERGE (b:Batch {namespace: $ns, host: $host, id: $id})
SET b.signed = $signed, b.sig = $sig, b.at = $at
"""
# Inside every write of a claimed store, first: lock this host's claim and
# read it, so a copy of this state directory pushing at the same moment
# waits, then finds the fence moved and is refused before it writes.
CHECK_CLAIM = """
MATCH (h:Host {namespace: $ns, name: $host})
SET h._lock = true REMOVE h._lock
RETURN h.instance AS instance, h.fence_at AS fence_at, h.fence_id AS fence_id
"""

WRITE_BATCH = 1000  # episodes per write transaction
TEAM_ID_RETRIES = 3  # reruns of a write whose new episode's team name another host took meanwhile


def _utcnow() -> str:
    from datetime import timezone

    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class Neo4jWrites:
    """The write half of a ``Neo4jStore`` (see store.py)."""

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
        stamped = [{"id": r["id"], "mentions": r["mentions"], "topics": r["topics"],
                    "props": stamp(r["props"], ns, self.host, batch.seqs.get(r["id"], 0), self.agent, self.instance)}
                   for r in batch.episodes]
        contents = {r["id"]: r.get("content") for r in batch.episodes}
        top = max((r["props"]["seq"] for r in stamped), default=None)
        fence = batch.fence
        renamed: list[str] = []
        signed = self._sign(stamped, contents)

        def work(tx) -> None:
            renamed.clear()
            if self.instance:
                self._check_claim(tx)
            got = tx.run(UPSERT_BATCH, rows=stamped, entities=batch.entities, topics=batch.topics, ns=ns,
                         host=self.host).single()
            renamed.extend(got["renamed"] if got else [])
            if signed is not None and signed[2] is not None:
                tx.run(UPSERT_SIGNED, ns=ns, host=self.host, id=signed[0], signed=signed[1], sig=signed[2],
                       at=_utcnow()).consume()
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
        if signed is not None and self.on_written is not None:
            try:
                self.on_written(signed[3])
            except Exception:  # noqa: BLE001 - unrecorded: recall leaves them out of the graph's answers
                pass
        return list(renamed)

    def _sign(self, stamped: list[dict], contents: dict) -> "tuple[str, str, str | None, dict[str, str]] | None":
        """(batch id, signed text, signature, id -> digest) of a batch of stamped rows,
        each row's props naming the batch. A store with no host key (tests,
        benchmarks: a peer refuses what it writes) signs nothing (signature None)
        but still tells ``on_written`` the digests, so its own recall vouches for
        what it wrote; None when there is nobody to tell either."""
        key = self.host_key
        if (key is None and self.on_written is None) or not stamped:
            return None
        ns = self.namespace
        items = {r["id"]: team_digest.digest(ns, self.host, r["id"], r["props"]["seq"], r["props"],
                                             contents.get(r["id"])) for r in stamped}
        if key is None or not self.host:
            return "", "", None, items
        text = team_digest.batch_text(ns, self.host, items)
        bid = team_digest.batch_id(text)
        for r in stamped:
            r["props"]["batch"] = bid
        return bid, text, key.sign(text), items

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
                again_after_deadlock(once)
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
