"""Which peers' tombstones this host obeys.

A pulled copy is deleted because its writer's supervisor forgot it, and only
then: anyone holding the team's Neo4j credentials (an agent on any host reads
them from its config) could otherwise write ``Forgotten`` nodes and erase
what an agent did from every other host. So each ``Forgotten`` node carries
the signed forget decision of its host (core/govern/forget.py), and a peer
obeys it only when:

* the signature verifies against that host's supervisor key as this host
  pinned it: the key the host declared on its ``Host`` node (``supervisor``,
  written by its sync) when this host first saw one (``team-supervisors.json``,
  trust on first use, as SSH does); and
* the signed selection names the episode.

A host that has declared no key has decisions that are "unverified" on its own
side too (no ``ars supervisor init``): its tombstones are obeyed as such,
until it declares a key; from then on they must be signed. A host whose
declared key differs from the pinned one (rotated, or someone wrote the
graph) is not obeyed, and the pull says so: after a real rotation the person
removes that host's line from ``team-supervisors.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.infra.fsutil import atomic_write

PINS_FILE = "team-supervisors.json"


def _pins(state: Path) -> dict[str, str]:
    try:
        data = json.loads((state / PINS_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _names_it(decision: dict, pin: str, episode_id: str) -> str:
    """"" when ``decision`` is signed by ``pin`` and forgets ``episode_id``, else why not."""
    from core.inbox.signing import verify_text

    text, why = verify_text(decision, pin)
    if text is None:
        return why
    try:
        payload = json.loads(text)
    except ValueError:
        return "its signed text is not a forget decision"
    if payload.get("kind") != "forget" or episode_id not in (payload.get("ids") or []):
        return "the signed decision does not name this episode"
    return ""


def signed_rows(state: Path, rows: list[dict[str, Any]], refused: list[str] | None = None) -> list[dict[str, Any]]:
    """The ``Forgotten`` rows this host obeys; one line per refused host goes to ``refused``."""
    pins = _pins(state)
    pinned_now = False
    keep: list[dict[str, Any]] = []
    why_not: dict[str, tuple[int, str]] = {}
    for r in rows:
        host, declared = r["host"], r.get("supervisor") or ""
        if host not in pins and declared:
            pins[host], pinned_now = declared, True
        pin = pins.get(host)
        if pin is None:  # no key on either side: unverified there, unverified here
            keep.append(r)
            continue
        if declared and declared != pin:
            why = f"it now declares key {declared}, pinned {pin} (after a real rotation remove it from {PINS_FILE})"
        else:
            try:
                decision = json.loads(r.get("decision") or "{}")
            except ValueError:
                decision = {}
            why = _names_it(decision, pin, str(r["id"]))
        if not why:
            keep.append(r)
            continue
        n, _ = why_not.get(host, (0, why))
        why_not[host] = (n + 1, why)
    if pinned_now:
        atomic_write(state / PINS_FILE, json.dumps(pins, indent=1, sort_keys=True))
    if refused is not None:
        refused.extend(f"{n} tombstones of host {h} not obeyed: {why}" for h, (n, why) in sorted(why_not.items()))
    return keep
