"""The other hosts' keys, pinned by this host the first time it saw them.

Trust on first use, as SSH does with host keys: the first pull that sees a
host (its ``Host`` node, which carries the key it declared when it claimed
its id: core/team/declare.py) pins that key, and the supervisor key the host
declared with its host key's signature, once it declares one. From then on
the pull takes that host's episodes and obeys its tombstones only with the
pinned keys' signatures (core/team/verify.py, core/govern/trusted.py). A
different key declared later for a known host (someone rewrote its node, or
the host lost its key) is not pinned: the pull says so in one line for that
host and goes on checking against the pinned key.

Where: ``team-keys.json`` in the state directory (what the pull reads), and
a ``team.key`` ledger event per pin (written before the file): a state
directory whose pins file is lost finds its pins again in its ledger before
it would pin anything anew, so nothing seen once is re-learned from the
graph. The pin file of an older ARS (``team-supervisors.json``, supervisor
fingerprints pinned with the first tombstone) is read as supervisor pins.

After a real change of key (a host restored without its ``host.key``, a
supervisor key rotated), the person removes that host's entry from
``team-keys.json`` (and its ``team.key`` events stay as history; the newest
counts) and runs ``ars sync pull --reset``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from core.events import TEAM_KEY_EVENT
from core.infra.fsutil import atomic_write, read_regular

if TYPE_CHECKING:
    from core.ledger.ledger import Ledger

PINS_FILE = "team-keys.json"
OLD_PINS_FILE = "team-supervisors.json"  # an older ARS's supervisor pins
MAX_FILE = 4 << 20


@dataclass
class Pin:
    key: str = ""  # the host key: base64 of the raw Ed25519 public key
    supervisor: str = ""  # the supervisor key's fingerprint, once the host declared one
    at: str = ""


@dataclass
class Pins:
    hosts: dict[str, Pin] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)  # host -> why its declared keys are not pinned
    unkeyed: set[str] = field(default_factory=set)  # hosts with no key pinned or declared: nothing taken

    def key_of(self, host: str) -> str:
        pin = self.hosts.get(host)
        return pin.key if pin else ""

    def supervisor_of(self, host: str) -> str:
        pin = self.hosts.get(host)
        return pin.supervisor if pin else ""


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _read(state: Path) -> dict[str, Pin] | None:
    """The pins file, or None when there is none (or it cannot be read)."""
    try:
        data = json.loads(read_regular(state / PINS_FILE, MAX_FILE))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    out = {}
    for host, d in data.items():
        if isinstance(d, dict):
            out[str(host)] = Pin(str(d.get("key") or ""), str(d.get("supervisor") or ""), str(d.get("at") or ""))
    return out


def _from_ledger(ledger: "Ledger") -> dict[str, Pin]:
    """The pins recorded in the ledger (the newest per host): read only when the pins file is lost."""
    out: dict[str, Pin] = {}
    try:
        for e in ledger.read(types=(TEAM_KEY_EVENT,)):
            host = str(e.data.get("host") or "")
            if host:
                out[host] = Pin(str(e.data.get("key") or ""), str(e.data.get("supervisor") or ""), e.ts)
    except OSError:
        pass
    return out


def _old_supervisors(state: Path) -> dict[str, str]:
    try:
        data = json.loads(read_regular(state / OLD_PINS_FILE, MAX_FILE))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def load(state: Path, ledger: "Ledger | None" = None, found: list[bool] | None = None) -> dict[str, Pin]:
    """Every pin of this state directory (the file; the ledger's when the file is
    lost). ``found`` gets whether the file was there and readable."""
    pins = _read(Path(state))
    if found is not None:
        found.append(pins is not None)
    if pins is None:
        pins = _from_ledger(ledger) if ledger is not None else {}
    for host, fp in _old_supervisors(Path(state)).items():
        pin = pins.setdefault(host, Pin())
        pin.supervisor = pin.supervisor or fp
    return pins


def save(state: Path, pins: dict[str, Pin]) -> None:
    atomic_write(Path(state) / PINS_FILE, json.dumps(
        {h: {"key": p.key, "supervisor": p.supervisor, "at": p.at} for h, p in sorted(pins.items())}, indent=1))


def observe(state: Path, ledger: "Ledger", namespace: str, hosts: Iterable[dict[str, Any]]) -> Pins:
    """The pins, after pinning what the graph's ``Host`` rows (name, key,
    supervisor, supervisor_sig) declare for hosts seen for the first time;
    a declaration that contradicts a pin is noted, never pinned."""
    from core.ledger.ledger import Event, content_id
    from core.team.declare import supervisor_of
    from core.team.host_key import fingerprint_of

    state = Path(state)
    found: list[bool] = []
    pins = load(state, ledger, found)
    out = Pins(hosts=pins)
    new: list[tuple[str, Pin]] = []
    for row in hosts:
        host, declared = str(row.get("name") or ""), str(row.get("key") or "")
        if not host:
            continue
        pin = pins.get(host)
        if pin is None or not pin.key:
            if not declared or not fingerprint_of(declared):
                out.unkeyed.add(host)
                out.problems[host] = ("it has declared no key (an older ARS pushes it, or its Host node was written "
                                      "by hand): nothing of it is taken until it runs `ars sync run` with this ARS")
                continue
            pin = pins[host] = Pin(declared, pin.supervisor if pin else "", _now())
            new.append((host, pin))
        elif declared and declared != pin.key:
            out.problems[host] = (f"it now declares key {fingerprint_of(declared) or 'unreadable'}, pinned "
                                  f"{fingerprint_of(pin.key)}: only what the pinned key signed is taken (after a "
                                  f"real re-key remove {host!r} from {PINS_FILE}, then `ars sync pull --reset`)")
        sup = supervisor_of(row.get("supervisor_sig"), namespace, host, pin.key)
        if sup and not pin.supervisor:
            pin.supervisor = sup
            if (host, pin) not in new:
                new.append((host, pin))
        elif sup and sup != pin.supervisor and host not in out.problems:
            out.problems[host] = (f"it now declares supervisor key {sup}, pinned {pin.supervisor}: its tombstones "
                                  f"are obeyed only when the pinned key signed them (after a real rotation remove "
                                  f"{host!r} from {PINS_FILE})")
    if new:
        # the ledger first: a pins file lost later is found again there
        ledger.append([Event(content_id(TEAM_KEY_EVENT, h, p.key, p.supervisor), TEAM_KEY_EVENT,
                             {"host": h, "key": p.key, "fingerprint": fingerprint_of(p.key),
                              "supervisor": p.supervisor}) for h, p in new])
    if new or not found[0]:
        save(state, pins)
    return out
