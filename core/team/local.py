"""What SQLite keeps for team memory, in tables of their own beside the
episode store (``memory.sqlite``):

* ``episode_origin``: each episode's namespace and host (this host's own, or
  the host a pulled episode came from);
* ``episode_origin.digest``: what its host signed of it (core/team/digest.py):
  set for a pulled episode when the pull verified it, and for this host's
  own when the push wrote it; recall serves a graph answer only when its
  digest is this one (``vouched``), so an episode written into the graph by
  someone else (with any host's name on it), or altered there, is never
  served as that host's memory. Cleared when the episode changes here;
* ``pull_cursor``: per other host, how far this store has pulled its episodes
  (``seq``, the ledger offset that host pushed the episode from, then ``id``
  for ties), written in the same transaction as the pulled episodes, so a
  crash mid-pull replays a page and never skips one. A rebuilt store has no
  cursor and pulls everything again. Read and moved by core/ledger/cursors.py.
"""

from __future__ import annotations

from core.infra.sqlite_lib import sqlite3
from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

from core.infra.sqlite_in import rows_in

if TYPE_CHECKING:
    from core.models import Episode
    from core.team.identity import Identity

SCHEMA = """
CREATE TABLE IF NOT EXISTS episode_origin (
    id TEXT PRIMARY KEY,
    namespace TEXT NOT NULL DEFAULT 'default',
    host TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS episode_origin_host ON episode_origin(host);
CREATE TABLE IF NOT EXISTS pull_cursor (
    host TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    id TEXT NOT NULL DEFAULT '',
    pulled INTEGER NOT NULL DEFAULT 0,
    at TEXT
);
"""


def ensure(conn: sqlite3.Connection) -> None:
    conn.executescript(SCHEMA)
    if "digest" not in {r[1] for r in conn.execute("PRAGMA table_info(episode_origin)")}:
        with conn:
            conn.execute("ALTER TABLE episode_origin ADD COLUMN digest TEXT")
            # what was pulled before hosts signed their episodes is pulled again, and checked
            conn.execute("DELETE FROM pull_cursor")


def record(conn: sqlite3.Connection, episodes: Iterable["Episode"]) -> None:
    conn.executemany(
        "INSERT INTO episode_origin (id, namespace, host) VALUES (?, ?, ?)"
        " ON CONFLICT(id) DO UPDATE SET namespace = excluded.namespace, host = excluded.host, digest = NULL",
        [(e.id, e.namespace, e.host) for e in episodes])


def record_digests(conn: sqlite3.Connection, host: str, digests: Mapping[str, str], own: bool = False) -> None:
    """What ``host`` signed of these episodes (name -> digest), in the caller's
    transaction; ``own``: this host's, whose rows from before hosts were recorded say ''."""
    conn.executemany("UPDATE episode_origin SET digest = ? WHERE id = ? AND host IN (?, ?)",
                     [(d, name, host, "" if own else host) for name, d in digests.items()])


def vouched(conn: sqlite3.Connection, rows: Sequence[tuple[str, str, str]], me: "Identity") -> set[str]:
    """Of graph answers (name, host, digest), the names this store holds from
    that host with that digest: what its host signed (or this host wrote)."""
    want = {name: (host, d) for name, host, d in rows}
    out = set()
    for eid, host, d in rows_in(conn, "SELECT id, host, digest FROM episode_origin WHERE id IN ({in})", list(want)):
        w_host, w_digest = want[eid]
        same_host = host == w_host or (not host and w_host == me.host)
        if same_host and d is not None and d == w_digest:
            out.add(eid)
    return out


def origin_of(conn: sqlite3.Connection, episode_id: str) -> tuple[str, str] | None:
    row = conn.execute("SELECT namespace, host FROM episode_origin WHERE id = ?", (episode_id,)).fetchone()
    return (row[0], row[1]) if row else None


def origins(conn: sqlite3.Connection, ids: Sequence[str], me: "Identity") -> dict[str, dict[str, str]]:
    """id -> {namespace, host, agent}; an episode from before hosts existed is this host's."""
    out: dict[str, dict[str, str]] = {}
    rows = rows_in(conn, "SELECT e.id, o.namespace, o.host, e.agent, e.source FROM episodes e"
                         " LEFT JOIN episode_origin o ON o.id = e.id WHERE e.id IN ({in})", ids)
    for eid, ns, host, agent, source in rows:
        mine = not host or host == me.host
        out[eid] = {"namespace": ns or me.namespace, "host": host or me.host,
                    "agent": me.agent_of(source, agent) if mine else (agent or source)}
    return out


def own_ids(conn: sqlite3.Connection, ids: Sequence[str], me: "Identity") -> set[str]:
    """Of ``ids``, those this host wrote itself (a pull never overwrites them)."""
    return {r[0] for r in rows_in(conn, "SELECT e.id FROM episodes e LEFT JOIN episode_origin o ON o.id = e.id"
                                      " WHERE e.id IN ({in}) AND coalesce(o.host, '') IN ('', ?)", ids,
                                  after=[me.host])}


def rename_own(conn: sqlite3.Connection, old: str, new: str) -> int:
    """This host's own episodes, recorded as ``old`` (or before hosts were
    recorded), are ``new``'s now (``ars sync run --rename``). Episodes pulled
    from other hosts keep theirs: none is ``old``, which was this host's own
    name and so never pulled."""
    with conn:
        return conn.execute("UPDATE episode_origin SET host = ? WHERE host IN (?, '')", (new, old)).rowcount


def counts_by_host(conn: sqlite3.Connection, me: "Identity") -> dict[str, int]:
    out: dict[str, int] = {}
    for host, n in conn.execute(
            "SELECT coalesce(nullif(o.host, ''), ?), count(*) FROM episodes e"
            " LEFT JOIN episode_origin o ON o.id = e.id GROUP BY 1", (me.host,)):
        out[host] = n
    return out
