"""A host's keys on its ``Host`` node: declared when it claims its host id.

The claim (core/team/claim.py) writes this directory's host key
(core/team/host_key.py) on the ``Host`` node in the same statement that
takes the id, so a peer that sees the host at all sees its key, and pins it
then (core/team/pins.py): from the first episode on, nothing can be passed
off as this host's without that key. A host claimed by an older ARS (no key
on its node) declares it at its next push, and pushes its whole ledger again
so every episode it wrote is signed; until then its peers take nothing of it.

The supervisor's key (``ars supervisor init``), when there is one, is
declared beside it as a fingerprint with the host key's signature over it
(``supervisor_sig``): a peer pins it too, and from then on obeys this host's
tombstones only when that supervisor signed the forget. A supervisor key made
later is declared at the next push (the peers pin it then); another one after
that is refused by the peers, loudly.

Someone with the graph's credentials can overwrite these properties; the
peers that pinned the keys refuse the new ones, and this host puts its own
back at its next push and says so (``store.notices``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.team import digest as team_digest
from core.team.host_key import HostKey, fingerprint_of

if TYPE_CHECKING:
    from core.memory.tiers.neo4j import Neo4jStore

SET_KEY = """
MATCH (h:Host {namespace: $ns, name: $host}) WHERE h.instance = $instance
SET h.key = $key
"""
SET_SUPERVISOR = """
MATCH (h:Host {namespace: $ns, name: $host}) WHERE h.instance = $instance
SET h.supervisor = $fp, h.supervisor_sig = $sig
"""


def supervisor_record(key: HostKey, namespace: str, host: str, fp: str) -> str:
    """The host key's signature over its supervisor's fingerprint, as stored on the node."""
    text = team_digest.supervisor_text(namespace, host, fp)
    return json.dumps({"signed": text, "signature": key.sign(text)}, separators=(",", ":"))


def supervisor_of(record: Any, namespace: str, host: str, public_b64: str) -> str:
    """The fingerprint a ``supervisor_sig`` record declares, signed by the host key
    ``public_b64``; "" when it is missing, not that key's, or about another host."""
    from core.team.host_key import verify

    try:
        d = json.loads(record) if isinstance(record, str) else None
        text, sig = d["signed"], d["signature"]
        payload = json.loads(text)
    except (TypeError, ValueError, KeyError):
        return ""
    if not isinstance(payload, dict) or payload.get("kind") != "supervisor" or payload.get("ns") != namespace \
            or payload.get("host") != host or not verify(public_b64, text, sig):
        return ""
    return str(payload.get("supervisor") or "")


def declare(store: "Neo4jStore", state_dir: Path, host: str, instance: str, key: HostKey,
            declared_key: str | None, declared_supervisor: str | None, supervisor_sig: Any) -> str:
    """Make the ``Host`` node hold this directory's keys (after the claim
    succeeded). Returns a line for the person when the graph held another
    host key for this host id ("" otherwise)."""
    from core.inbox.signing import public_fingerprint

    note = ""
    if declared_key != key.public:
        store._run(SET_KEY, write=True, host=host, instance=instance, key=key.public)
        if declared_key:
            note = (f"the graph held another key for host {host!r} ({fingerprint_of(declared_key) or 'unreadable'}), "
                    f"not this state directory's ({key.fingerprint}): declared this one again. Hosts that pinned "
                    f"the other refuse this host's new memories until each removes its line from team-keys.json; "
                    f"if {Path(state_dir) / 'host.key'} was lost, restore it from a backup instead")
    fp = public_fingerprint(state_dir)
    if fp and (declared_supervisor != fp or supervisor_of(supervisor_sig, store.namespace, host, key.public) != fp):
        store._run(SET_SUPERVISOR, write=True, host=host, instance=instance, fp=fp,
                   sig=supervisor_record(key, store.namespace, host, fp))
    return note
