"""``--scope agent=NAME,host=NAME``: recall only the memories of some agents
or hosts of the namespace (the MCP tools take the same string).

Neo4j filters in its full-text query (``host`` and ``agent`` are fields of the
episode index); the other tiers are asked for more candidates and their hits
are kept when SQLite (which holds every pulled episode) says they match.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

from core.errors import BadQuery
from core.models import Hit

KEYS = ("agent", "host")
OVERFETCH = 4  # candidates asked of a post-filtered tier per hit wanted


@dataclass(frozen=True)
class Scope:
    agents: frozenset[str] = frozenset()
    hosts: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.agents or self.hosts)

    def admits(self, origin: Mapping[str, str] | None) -> bool:
        if origin is None:
            return False  # origin unknown: not provably in scope
        if self.agents and origin.get("agent", "") not in self.agents:
            return False
        if self.hosts and origin.get("host", "") not in self.hosts:
            return False
        return True

    def describe(self) -> str:
        parts = [f"agent={a}" for a in sorted(self.agents)] + [f"host={h}" for h in sorted(self.hosts)]
        return ",".join(parts)


def parse_scope(text: "str | Scope | None") -> Scope | None:
    """``agent=a,host=h`` (a key may repeat: either value matches) -> Scope."""
    if text is None or isinstance(text, Scope):
        return text or None
    if not isinstance(text, str):
        raise BadQuery("scope must be a string like agent=NAME,host=NAME")
    found: dict[str, set[str]] = {k: set() for k in KEYS}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        key, sep, value = part.partition("=")
        key, value = key.strip().lower(), value.strip()
        if not sep or key not in KEYS or not value:
            raise BadQuery(f"scope part {part[:40]!r} is not agent=NAME or host=NAME: "
                           "e.g. --scope agent=claude-code,host=laptop")
        found[key].add(value)
    scope = Scope(frozenset(found["agent"]), frozenset(found["host"]))
    if not scope:
        raise BadQuery("empty scope: give agent=NAME and/or host=NAME, or leave --scope out")
    return scope


def keep_in_scope(hits: Iterable[Hit], scope: Scope, origins: Mapping[str, Mapping[str, str]], k: int) -> list[Hit]:
    """The first ``k`` hits whose origin is in scope, ranks renumbered."""
    out = []
    for h in hits:
        origin = h.origin or origins.get(h.episode_id)
        if scope.admits(origin):
            out.append(h.model_copy(update={"rank": len(out) + 1, "origin": dict(origin or {})}))
            if len(out) >= k:
                break
    return out
