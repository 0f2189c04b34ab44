"""What one Neo4j write transaction carries (``GraphBatch``): the episodes'
node properties, their distinct entities and topics, relations, order and
session contexts. Building it is pure Python, so the sync worker builds the
next batch while the server commits this one."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from core.memory.context import CONTEXT_NEIGHBOURS, context_of, order_key
from core.memory.text import index_text
from core.models import Episode
from core.team.digest import content_hash


def stamp(props: dict[str, Any], namespace: str, host: str, seq: int, agent: str = "",
          instance: str = "") -> dict[str, Any]:
    """An episode's node properties with where it was written: its namespace,
    host, agent (else ARS_AGENT, else the transcript's source), ``seq`` and the
    instance (the state directory) that wrote it. ``host`` is part of the
    node's key, so a store with no host id writes ``""``, never null."""
    return {**props, "namespace": namespace, "host": host or "",
            "agent": props.get("agent") or agent or props.get("source") or "", "seq": seq,
            "instance": instance or None}


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

    episodes: list[dict[str, Any]]  # id, props, mentions and topics as positions in the lists below, content hash
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
            props = episode_props(e, terms.get(e.id), contexts.get(e.id, ""))
            # its content's hash for the signature (core/team/digest.py), made here: the push
            # builds the next batch while the server commits this one
            rows.append({"id": e.id, "props": props, "mentions": list(mentions), "topics": list(tags),
                         "content": content_hash(props)})
        return cls(
            episodes=rows,
            entities=entities,
            topics=topics,
            relations=relations,
            follows=[{"id": e.id, "prev": e.meta["prev"]} for e in eps if e.meta.get("prev")],
            contexts=[{"id": i, "context": c} for i, c in contexts.items() if i not in ids],
        )


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
