"""A host id is claimed in the graph by the state directory that pushes as it.

Two state directories given the same ``ARS_HOST_ID`` in one namespace would
otherwise write as one host: their pushes interleave in one push order (so
the other hosts' pull cursors skip episodes) and one's ``ars sync backfill
--clear`` deletes the other's episodes. So the first push of a state
directory claims ``(namespace, host)``: its ``Host`` node (unique per
namespace and name, which makes the claim atomic across hosts) records the
directory's instance (a random id kept in ``team.json``), when, and where
(machine and path, for the message). Any other instance is refused, with one
line, before it writes or deletes anything; ``ars sync run --rename NEW``
gives it a host id of its own.

A copied state directory (``cp -a``, a restored backup, a disk image) carries
the same instance. The claim's fence catches it: every push records on the
``Host`` node the last ledger event it pushed (where it starts in the ledger,
and its id). Before pushing, a directory checks that its own ledger has that
event at that place; a copy whose ledger went another way since (or is
shorter: an older backup) does not, and is refused the same way. Until the
two have diverged they are indistinguishable (they hold the same events),
and the first of them to push new events keeps the claim. Inside every write
the store checks the claim and the fence again, in the same transaction, so
two copies pushing at the same moment cannot both pass.

The claim also declares the directory's host key (core/team/declare.py): the
statement that takes a free host id writes the key with it, so the first
sight any peer has of a host carries the key it pins (core/team/pins.py).
"""

from __future__ import annotations

import socket
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.team.identity import HostClaimed, Identity, bind, new_instance, recorded

if TYPE_CHECKING:
    from core.ledger.ledger import Ledger
    from core.memory.tiers.neo4j import Neo4jStore

# Claim the host id for ``$instance`` unless an instance holds it already;
# ``fresh``: the graph records no push of this host (a new host, or one whose
# part of the graph was cleared or lost: its whole ledger goes out again).
# (the host key goes in with a free claim: core/team/declare.py)
_CLAIM_RETURN = """
RETURN h.instance AS instance, h.since AS since, h.claimed_by AS by, h.fence_at AS fence_at,
       h.fence_id AS fence_id, h.seq IS NULL AS fresh, h.key AS key, h.supervisor AS supervisor,
       h.supervisor_sig AS supervisor_sig"""
CLAIM = """
MERGE (h:Host {namespace: $ns, name: $host})
WITH h, h.instance IS NULL AS free
SET h.instance = CASE WHEN free THEN $instance ELSE h.instance END,
    h.since = CASE WHEN free THEN $now ELSE h.since END,
    h.claimed_by = CASE WHEN free THEN $by ELSE h.claimed_by END,
    h.key = CASE WHEN free THEN $key ELSE h.key END
""" + _CLAIM_RETURN + ", free"
READ = """
MATCH (h:Host {namespace: $ns, name: $host})
""" + _CLAIM_RETURN + ", false AS free"


@dataclass(frozen=True)
class Claim:
    host: str
    instance: str  # the holder's
    since: str | None
    by: str  # machine:path of the state directory that claimed it
    fence: tuple[int, str] | None
    fresh: bool  # no push of this host in the graph
    acquired: bool  # claimed by this call
    key: str = ""  # the host key declared on the node (base64 raw public key)
    keyless: bool = False  # claimed by an older ARS, which declared no host key: its episodes are unsigned
    note: str = ""  # for the person: the graph held another key for this host id (core/team/declare.py)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def where(state_dir: Path) -> str:
    """machine:path of a state directory, for the other directories' messages."""
    return f"{socket.gethostname()}:{Path(state_dir).resolve()}"


def ensure_instance(state_dir: Path, ident: Identity) -> Identity:
    """``ident`` with this directory's instance, made and recorded in
    ``team.json`` the first time (callers hold the push lock)."""
    have = recorded(state_dir)
    instance = have.get("instance") if have.get("host") == ident.host else ""
    if not instance:
        instance = new_instance()
        bind(state_dir, replace(ident, instance=instance))
    return replace(ident, instance=instance)


def _claim_of(row: dict[str, Any], host: str) -> Claim:
    fence = (row["fence_at"], row["fence_id"]) if row["fence_at"] is not None else None
    return Claim(host=host, instance=row["instance"] or "", since=row["since"], by=row["by"] or "",
                 fence=fence, fresh=bool(row["fresh"]), acquired=bool(row["free"]), key=row.get("key") or "",
                 keyless=not row.get("key"))


def read(store: "Neo4jStore", host: str) -> Claim | None:
    """The claim on ``host`` in the store's namespace, or None (not claimed)."""
    rows = store._run(READ, host=host, timeout=10)
    if not rows or not rows[0]["instance"]:
        return None
    return _claim_of(rows[0], host)


def claim(store: "Neo4jStore", ident: Identity, ledger: "Ledger", state_dir: Path) -> Claim:
    """Claim ``ident.host`` for this state directory, or raise HostClaimed
    (nothing written but the claim itself). On success the store is set up
    to write as the holder: every write re-checks claim and fence."""
    from core.team.declare import declare
    from core.team.host_key import load as host_key

    store.ensure_schema()
    key = host_key(state_dir, create=True)
    rows = store._run(READ, host=ident.host, timeout=10)
    if rows and rows[0]["instance"]:
        row = rows[0]  # held already (by this directory, on every run but the first)
    else:  # claimed now, or found claimed by another at this very moment
        row = store._run(CLAIM, write=True, host=ident.host, instance=ident.instance, now=_now(),
                         by=where(state_dir), key=key.public)[0]
    got = _claim_of(row, ident.host)
    problem = conflict(got, ident, ledger)
    if problem:
        raise HostClaimed(problem)
    note = declare(store, state_dir, ident.host, ident.instance, key, row.get("key"), row.get("supervisor"),
                   row.get("supervisor_sig"))
    if note and note not in store.notices:
        store.notices.append(note)
    store.instance, store.fence, store.host_key = ident.instance, got.fence, key
    return replace(got, note=note)


def conflict(got: Claim | None, ident: Identity, ledger: "Ledger") -> str:
    """One line naming the conflict, or "" when this directory may push as ``ident.host``."""
    if got is None:
        return ""
    if got.instance != ident.instance:
        return (f"host id {ident.host!r} in namespace {ident.namespace!r} is claimed by another state directory "
                f"(instance {got.instance}, {got.by or 'unknown place'}, since {got.since or '?'}): "
                f"nothing was written; give this one its own id with `ars sync run --rename NEW` "
                f"(or point ARS_STATE_DIR at that directory if this was meant to be it)")
    if got.fence is not None and not has_event(ledger, *got.fence):
        return (f"host id {ident.host!r} in namespace {ident.namespace!r} was last pushed, with this state "
                f"directory's instance {ident.instance}, from a ledger that is not this one (ledger event "
                f"{got.fence[1]} at byte {got.fence[0]}): this directory is a copy or an older backup of the "
                f"one that holds the claim ({got.by or 'unknown place'}); nothing was written. If the other still "
                f"runs: `ars sync run --rename NEW` here; if it is gone for good: `ars sync backfill --clear` here")
    return ""


def has_event(ledger: "Ledger", at: int, event_id: str) -> bool:
    """Whether this ledger holds event ``event_id`` starting at byte ``at``."""
    try:
        if at < 0 or at >= ledger.size():
            return False
        first = next(iter(ledger.read(at)), None)
    except OSError:
        return False
    return first is not None and first.offset == at and first.event_id == event_id


def _key_state(got: Claim | None, state_dir: Path | None) -> str:
    """For ``sync status``: this host's key as the graph declares it."""
    from core.team.host_key import fingerprint_of, load as host_key

    if got is None:
        return "declared with the claim, at the first `ars sync run`"
    if got.keyless:
        return "not declared (an older ARS claimed this id): the next `ars sync run` declares it"
    declared = fingerprint_of(got.key)
    try:
        mine = host_key(state_dir) if state_dir is not None else None
    except OSError as exc:
        return f"declared {declared}; this directory's cannot be read: {exc}"
    if mine is not None and mine.fingerprint != declared:
        return (f"the graph declares {declared}, not this directory's {mine.fingerprint}: "
                "the next `ars sync run` puts it back")
    return f"declared {declared}"


def release(store: "Neo4jStore", ident: Identity, ledger: "Ledger") -> bool:
    """On a rename: if this directory holds ``ident.host`` (its instance, its
    fence), delete that host's part of the graph and the claim, so the host id
    is free and its episodes are not kept twice (the new id pushes them all
    again); returns whether it did. A host id held by another directory, or by
    a copy of this one, is left as it is."""
    got = read(store, ident.host)
    if got is None or got.instance != ident.instance or conflict(got, ident, ledger):
        return False
    store.clear_mine(host=ident.host, release=True)
    return True


def status(store: "Neo4jStore", ident: Identity, ledger: "Ledger", state_dir: Path | None = None) -> dict[str, Any]:
    """For ``ars sync status``: the claim on this host id and any conflict."""
    got = read(store, ident.host)
    out: dict[str, Any] = {"host": ident.host, "instance": ident.instance or None,
                           "holder": got.instance if got else None, "since": got.since if got else None,
                           "by": got.by if got else None, "key": _key_state(got, state_dir)}
    if got is None:
        out["state"], out["conflict"] = "unclaimed", ""
        out["note"] = "the next `ars sync run` claims it"
        return out
    line = conflict(got, ident, ledger)
    out["state"] = "held" if not line else ("copy" if got.instance == ident.instance else "claimed by another")
    out["conflict"] = line
    return out
