"""What an episode is called when two hosts of a namespace wrote the same id.

An episode belongs to the host that wrote it: in the graph it is keyed by
(namespace, host, id), so a second host writing an id the first has already
written adds a second episode and never overwrites the first. Recall, explain
and the pull need one name per episode, so each node also gets a name unique
in the namespace when it is created, ``team_id``: its id when that is free,
else ``id@host`` (the host that wrote it). The name never changes once given,
so a host that pulled an episode under it never has to rename it.

Each host reads those names with one exception: its own episodes keep their
ids (its ledger and SQLite know them by those), so when another host's
episode holds the plain id this host also wrote, this host calls that one
``id@host``. On host ``b`` that wrote ``x`` after host ``a`` did: its own is
``x``, ``a``'s is ``x@a``; on ``a`` and on a third host: ``x`` and ``x@b``.
The same rule is written in Cypher for the graph's answers
(``core/team/graph.named``) and here for the pull.
"""

from __future__ import annotations

from typing import Collection


def qualified(episode_id: str, host: str) -> str:
    return f"{episode_id}@{host}"


def split_name(name: str) -> tuple[str | None, str | None]:
    """``id@host`` -> (id, host); (None, None) for a name with no host in it."""
    eid, sep, host = name.rpartition("@")
    return (eid, host) if sep and eid and host else (None, None)


def candidates(episode_id: str, team_id: str | None, host: str) -> tuple[str, str]:
    """The two names a pulled episode may get here: its team name, and its
    qualified id (when this host wrote the same id)."""
    return team_id or episode_id, qualified(episode_id, host)


def local_name(episode_id: str, team_id: str | None, host: str, own: Collection[str]) -> str | None:
    """The name this host gives another host's episode, ``own``: the names of
    this host's own episodes among the candidates. None when even the
    qualified name is one of this host's own ids (an id that contains '@':
    the pull skips it and says so)."""
    name = team_id or episode_id  # no team name: written before episodes were keyed by host
    if name == episode_id and name in own:
        name = qualified(episode_id, host)
    return None if name in own else name
