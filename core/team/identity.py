"""Who writes: the namespace a state directory belongs to, and its host id.

A state directory is bound to one namespace and one host id, recorded in
``team.json`` the first time it is used: the ledger and SQLite hold that
namespace's memory only, so the local tiers need no namespace filter and a
mistyped ``ARS_NAMESPACE`` cannot mix two teams' episodes in one ledger. A
state directory from before namespaces existed (a ledger, no ``team.json``)
is namespace ``default``. The host id is recorded too, so a laptop renamed
on its network keeps pushing and pulling as the same host.

``team.json`` also keeps the directory's ``instance``: a random id made the
first time the directory claims its host id in the graph (``claim.py``), so
the graph can tell two state directories that were given the same host id
apart. ``ars sync run --rename NEW`` re-binds the directory to a new host id
with a new instance.
"""

from __future__ import annotations

import json
import re
import secrets
import socket
from dataclasses import dataclass
from pathlib import Path

from core.errors import BadQuery
from core.infra.fsutil import atomic_write

TEAM_FILE = "team.json"
DEFAULT_NAMESPACE = "default"
# A name that is one Lucene token under the whitespace analyzer and safe in a
# file name: letters, digits, '_', '-', '.'
NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")


class NamespaceMismatch(BadQuery):
    """ARS_NAMESPACE / ARS_HOST_ID differ from what the state directory holds."""


class HostClaimed(BadQuery):
    """Another state directory holds this host id in the graph (or this one is
    a copy of the directory that does): nothing was written."""


@dataclass(frozen=True)
class Identity:
    namespace: str
    host: str
    agent: str = ""  # ARS_AGENT: the agent of episodes whose transcript names none
    instance: str = ""  # this state directory's claim on ``host`` (claim.py); "" until its first claim

    def agent_of(self, source: str, agent: str = "") -> str:
        """An episode's agent: its own, else ARS_AGENT, else its transcript's source."""
        return agent or self.agent or source


def check_name(kind: str, value: str) -> str:
    value = value.strip()
    if not NAME.match(value):
        raise BadQuery(f"{kind} {value[:70]!r} is not a valid name: use 1-64 letters, digits, '_', '-' or '.'")
    return value


def default_host() -> str:
    """The host name, made a valid host id (dots kept, anything else '-')."""
    name = re.sub(r"[^A-Za-z0-9_.\-]", "-", socket.gethostname() or "host")[:64]
    return name or "host"


def recorded(state_dir: Path) -> dict[str, str]:
    try:
        data = json.loads((Path(state_dir) / TEAM_FILE).read_text())
        return {k: v for k, v in data.items() if isinstance(v, str)} if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def recorded_namespace(state_dir: Path) -> str:
    """The namespace of events written with no Memory at hand (loop and inbox
    events): the recorded one, else ARS_NAMESPACE for a directory not bound yet."""
    import os

    state_dir = Path(state_dir)
    bound = recorded(state_dir).get("namespace")
    if bound:
        return bound
    if (state_dir / "ledger.jsonl").exists():
        return DEFAULT_NAMESPACE  # written before namespaces
    env = (os.environ.get("ARS_NAMESPACE") or "").strip()
    return env if NAME.match(env) else DEFAULT_NAMESPACE


def resolve(state_dir: Path, namespace: str | None, host: str | None, agent: str | None = None,
            record: bool = True) -> Identity:
    """The identity in force for ``state_dir``: what it recorded, else the
    settings (else ``default`` and the host name); records it when the
    directory exists. A setting that contradicts the record is one clear
    error (exit 2), never a silent mix."""
    state_dir = Path(state_dir)
    have = recorded(state_dir)
    ns = check_name("ARS_NAMESPACE", namespace) if namespace else None
    hid = check_name("ARS_HOST_ID", host) if host else None
    legacy = not have and (state_dir / "ledger.jsonl").exists()
    bound_ns = have.get("namespace") or (DEFAULT_NAMESPACE if legacy else None)
    if ns and bound_ns and ns != bound_ns:
        raise NamespaceMismatch(
            f"state directory {state_dir} holds namespace {bound_ns!r}, but ARS_NAMESPACE={ns}: "
            f"use a separate state directory (--state) for each namespace, or unset ARS_NAMESPACE")
    if hid and have.get("host") and hid != have["host"]:
        raise NamespaceMismatch(
            f"state directory {state_dir} pushes as host {have['host']!r}, but ARS_HOST_ID={hid}: "
            f"unset ARS_HOST_ID, or give this state directory that id with `ars sync run --rename {hid}`")
    ident = Identity(namespace=bound_ns or ns or DEFAULT_NAMESPACE,
                     host=have.get("host") or hid or default_host(), agent=(agent or "").strip(),
                     instance=have.get("instance", "") if have.get("host") else "")
    if record and (have.get("namespace"), have.get("host")) != (ident.namespace, ident.host) and state_dir.is_dir():
        bind(state_dir, ident)
    return ident


def bind(state_dir: Path, ident: Identity) -> None:
    """Record ``ident`` in the state directory (before its first write). The
    recorded instance is kept while the host id stays the same: it is this
    directory's claim on that host id."""
    data = {"namespace": ident.namespace, "host": ident.host}
    have = recorded(state_dir)
    instance = ident.instance or (have.get("instance", "") if have.get("host") == ident.host else "")
    if instance:
        data["instance"] = instance
    try:
        atomic_write(Path(state_dir) / TEAM_FILE, json.dumps(data, indent=1))
    except OSError:
        pass  # a read-only state directory still reads as its namespace


def new_instance() -> str:
    """A random instance id: 64 bits, so two state directories never share one
    unless one was copied from the other."""
    return secrets.token_hex(8)
