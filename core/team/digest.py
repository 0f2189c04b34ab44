"""What a host signs of the episodes it pushes, and how a peer checks it.

Each episode node gets a *digest*: SHA-256 over its namespace, host, id,
place in the push order (``seq``) and the properties a peer stores and
serves (text, summary, agent, session, times, topics, index terms), as the
push wrote them. The push signs the digests of each write batch at once
(``batch_text``: one Ed25519 signature per batch, not per episode: the sign
costs ~30 µs, the digest ~10 µs an episode) and keeps the signed text on a
``Batch`` node; each episode names its batch (``e.batch``). A peer pulling a
page recomputes each row's digest and takes the row only when its batch
verifies against the writing host's pinned key (core/team/pins.py) and lists
that digest under that id (core/team/verify.py).

Not covered, on purpose: the session ``context`` (re-sent without the rest
when a neighbour arrives or is forgotten; it only moves a score), and the
``MENTIONS`` edges (entity nodes are shared by the namespace).

The digest lists no text; a ``Batch`` node holds ids and digests only.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any, Mapping

# The properties covered, as the push writes them on the node (core/memory/tiers/neo4j/batch.py):
# the content (hashed once per episode, where the push builds its batch, in the thread
# that works while the server commits the batch before), then who and where.
CONTENT = ("source", "session_id", "channel", "summary", "text", "topics", "terms",
           "first_ts", "last_ts", "message_count")
FIELDS = CONTENT + ("agent",)


def _norm(value: Any) -> Any:
    """One form for what a graph round trip may change: a missing property, null,
    "" and an empty list are the same; lists hold strings."""
    if value is None or value == "" or value == []:
        return None
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return int(value) if float(value).is_integer() else value
    return str(value)


def _feed(h, values) -> None:
    """Each value typed and length-prefixed; a text as it is, not JSON-quoted."""
    for v in values:
        if isinstance(v, str):
            tag, raw = b"s", v.encode("utf-8", "surrogatepass")
        else:
            tag, raw = b"j", json.dumps(v, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
        h.update(tag + len(raw).to_bytes(8, "big"))
        h.update(raw)


def content_hash(props: Mapping[str, Any]) -> bytes:
    """SHA-256 of an episode's content properties (``CONTENT``)."""
    h = hashlib.sha256()
    _feed(h, (_norm(props.get(k)) for k in CONTENT))
    return h.digest()


def digest(namespace: str, host: str, episode_id: str, seq: Any, props: Mapping[str, Any],
           content: bytes | None = None) -> str:
    """The digest of one episode node (base64 of SHA-256, 43 characters): where it
    is (namespace, host, id, push order), its agent, and its content's hash
    (``content``, when the caller has it already)."""
    h = hashlib.sha256()
    _feed(h, (namespace, host or "", episode_id, _norm(seq), _norm(props.get("agent"))))
    h.update(content if content is not None else content_hash(props))
    return base64.b64encode(h.digest()).decode().rstrip("=")


def batch_text(namespace: str, host: str, items: Mapping[str, str]) -> str:
    """The text a host signs for one batch: its episodes' ids and digests."""
    return json.dumps({"v": 1, "kind": "episodes", "ns": namespace, "host": host, "items": dict(items)},
                      sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def batch_id(text: str) -> str:
    """A batch's id: from what it signs, so a rerun of the same write makes the same node."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def batch_items(text: str, namespace: str, host: str) -> dict[str, str] | None:
    """id -> digest of a signed batch text of ``host`` in ``namespace``; None when it is not one."""
    try:
        d = json.loads(text)
    except (TypeError, ValueError):
        return None
    if not isinstance(d, dict) or d.get("v") != 1 or d.get("kind") != "episodes":
        return None
    if d.get("ns") != namespace or d.get("host") != host or not isinstance(d.get("items"), dict):
        return None
    return {str(k): str(v) for k, v in d["items"].items()}


def tombstone_text(namespace: str, host: str, episode_id: str, event_id: str) -> str:
    """The text a host with no supervisor key signs for one ``Forgotten`` node."""
    return json.dumps({"v": 1, "kind": "forgotten", "ns": namespace, "host": host, "id": episode_id,
                       "event": event_id}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def supervisor_text(namespace: str, host: str, supervisor: str) -> str:
    """The text a host signs to declare its supervisor's key (a fingerprint)."""
    return json.dumps({"v": 1, "kind": "supervisor", "ns": namespace, "host": host, "supervisor": supervisor},
                      sort_keys=True, separators=(",", ":"), ensure_ascii=False)
