"""The pull: the namespace's episodes written by other hosts, from Neo4j into
this host's SQLite, so that with the graph down this host still recalls the
whole team's memory up to its last pull.

One cursor per other host (``pull_cursor`` in ``memory.sqlite``, see
core/ledger/cursors.py), moved in the transaction that stores the page it read
(core/memory/apply.py, the one writer of SQLite): a crash
replays at most a page, and a replayed page changes nothing (upserts by id).
A host's episodes come in the order it pushed them (``seq``: the ledger
offset it pushed them from), so a later version of an episode arrives later
and wins. The raw files tier stays local: only episodes travel. Pulled
episodes are never pushed back (they are not in this host's ledger).

Two hosts may write the same episode id: both episodes arrive, each under
the name this host gives it (``names.py``: the team name, or ``id@host``
when this host wrote that id too); a pulled episode never replaces one of
this host's own.

Only what a host signed arrives as that host's: each page is checked against
the key this host pinned for it (core/team/pins.py, core/team/verify.py),
and so is each tombstone (core/govern/trusted.py). What is refused is said
in one line per host and counted for ``ars sync status`` (core/team/refusals.py);
a host that has declared no key is not read at all (its cursor waits).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Iterator

from pydantic import BaseModel, ValidationError

from core.govern.graph_forget import drop_pulled
from core.govern.tombstone import load as forgotten_set
from core.infra.prefetch import prefetch
from core.ledger.cursors import PullCursors
from core.memory.apply import apply_pulled
from core.memory.tiers.base import one_line
from core.memory.tiers.neo4j import is_transient
from core.models import Episode
from core.team import graph, local
from core.team import pins as team_pins
from core.team.names import candidates, local_name
from core.team.refusals import Refusals, load as refused_counts
from core.team.verify import BatchCache, signed_rows

if TYPE_CHECKING:
    from core.ledger.ledger import Ledger
    from core.memory.stores import Stores

PAGE = 2000  # episodes per read (and per SQLite transaction)
ENTITY_TYPES = {"person", "agent", "product", "project", "file", "tool", "technology",
                "channel", "concept", "endpoint", "command"}


class PullReport(BaseModel):
    pulled: int = 0
    hosts: dict[str, int] = {}  # other host -> episodes pulled from it this run
    skipped: int = 0  # rows that were not valid episodes, or named like one of this host's own
    shared: int = 0  # pulled under a qualified name: another host's episode of an id this host wrote too
    ok: bool = True
    error: str = ""
    caught_up: bool = False  # every other host read to its end (not stopped by max_seconds)
    dropped: int = 0  # pulled copies deleted: their writer forgot them (core/govern/graph_forget.py)
    refused: list[str] = []  # episodes and tombstones refused (not signed by their host's pinned keys): a line per host
    refused_episodes: int = 0  # of them, episodes (core/team/verify.py)


def to_episode(row: dict[str, Any], host: str, namespace: str, name: str, prev: str | None = None) -> Episode:
    """A pulled row as the episode this host stores under ``name`` (``prev``:
    the name of the episode before it in its session)."""
    return Episode.model_validate({
        "id": name, "source": row.get("source") or "manual", "session_id": row.get("session_id") or "",
        "agent": row.get("agent") or "", "channel": row.get("channel") or "", "summary": row.get("summary") or "",
        "text": row.get("text") or "", "topics": list(row.get("topics") or []),
        "entities": [{"name": n, "type": t if t in ENTITY_TYPES else "concept"}
                     for n, t in (row.get("entities") or []) if n],
        "first_ts": row.get("first_ts"), "last_ts": row.get("last_ts"),
        "message_count": row.get("message_count") or 0,
        "meta": {"prev": prev} if prev else {},
        "namespace": namespace, "host": host,
    })


def _pages(store, todo: dict[str, tuple[int, str]], page: int) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """(host, rows) pages of every host in ``todo`` (host -> its cursor), one
    page of each in turn, until each is caught up: the hosts share a pull's
    time instead of the first in name order taking all of it."""
    todo = dict(todo)
    while todo:
        for name in list(todo):
            seq, last = todo[name]
            rows = graph.page(store, name, seq, last, page)
            if rows:
                todo[name] = (rows[-1]["seq"], rows[-1]["id"])
                yield name, rows
            if len(rows) < page:
                del todo[name]


class _Check:
    """What a pull checks rows against: the pinned keys, the batches verified so far, the refusals."""

    def __init__(self, stores: "Stores", hosts: list[dict[str, Any]], refusals: Refusals | None = None):
        self.store = stores.neo4j
        self.namespace = stores.identity.namespace
        self.pins = team_pins.observe(stores.state_dir, stores.ledger, self.namespace, hosts)
        self.cache = BatchCache()
        self.refusals = refusals if refusals is not None else Refusals()
        for host, line in self.pins.problems.items():
            self.refusals.note(host, line)

    def rows(self, host: str, rows: list[dict[str, Any]]) -> tuple[list[dict], list[tuple[dict, str]]]:
        """(the rows its pinned key signed, the others with why)."""
        return signed_rows(self.store, self.namespace, self.pins, host, rows, self.cache)

    def close(self, stores: "Stores", report: PullReport) -> None:
        report.refused = self.refusals.lines()
        report.refused_episodes = sum(h.episodes for h in self.refusals.hosts.values())
        try:
            self.refusals.save(stores.state_dir)
        except OSError:
            pass  # the counts of `sync status`; the report has the lines


def pull(stores: "Stores", max_seconds: float = 60.0, page: int = PAGE, refusals: Refusals | None = None) -> PullReport:
    """Pull every other host's new episodes (until caught up or ``max_seconds``).
    ``refusals``: shared by the pull turns of one sync run (one line per host for the run)."""
    report = PullReport()
    store = stores.neo4j
    if store is None:
        report.ok, report.error = False, "neo4j is not configured (set ARS_NEO4J_URI)"
        return report
    me = stores.identity
    sqlite = stores.sqlite
    cursors = PullCursors(lambda: sqlite)
    until = time.monotonic() + max_seconds
    check: _Check | None = None
    try:
        store.breaker.before_call()
        hosts = graph.hosts(store, me.host)
        check = _Check(stores, hosts, refusals)  # the other hosts' keys, pinned at first sight
        # what the other hosts forgot goes from here first (core/govern/graph_forget.py)
        report.dropped = drop_pulled(stores, store, check.pins, check.refusals)
        todo: dict[str, tuple[int, str]] = {}
        for h in hosts:
            if h["name"] in check.pins.unkeyed:
                continue  # no key to check it by: read once it declares one (its cursor waits)
            seq, last = cursors.of(h["name"])
            if h["seq"] is not None and seq > h["seq"]:
                continue  # nothing after the cursor (or a graph rebuilt behind it: ars sync pull --reset)
            todo[h["name"]] = (seq, last)
        # the next page is read while this one is stored (the read waits on the
        # server, the store is this host's CPU); the cursor that counts is the
        # one stored with each page, so a page read ahead and dropped is only re-read
        pages = prefetch(_pages(store, todo, page), name="ars-pull-read")
        try:
            report.caught_up = True
            for name, rows in pages:
                report.pulled += _store(sqlite, me, name, rows, report, check)
                if time.monotonic() >= until:
                    report.caught_up = False
                    break
        finally:
            pages.close()
        store.breaker.success()
    except Exception as exc:  # noqa: BLE001 - reported; the cursors hold what was stored
        if not is_transient(exc):
            store.breaker.failure(one_line(exc))
        report.ok, report.error = False, one_line(exc)
    if check is not None:
        check.close(stores, report)
    return report


def _named(sqlite, me, host: str, rows: list[dict[str, Any]],
           report: PullReport) -> tuple[list[Episode], dict[str, str], dict[str, str]]:
    """``host``'s rows (checked: core/team/verify.py) as the episodes this host
    stores (names.py), and the index terms their writer stored and the digests
    it signed, by name."""
    keyed = [r for r in rows if r.get("id")]
    prevs = [(p[0], p[1] if len(p) > 1 else None) for p in (r.get("prev") for r in keyed)
             if isinstance(p, list) and p and p[0]]
    # which of the names these episodes may get are this host's own ids: their
    # team names first, then (rarely) the qualified ids of those that are
    first = {r.get("team_id") or r["id"] for r in keyed} | {t or p for p, t in prevs}
    own = local.own_ids(sqlite.team(), sorted(first), me)
    if own:
        second = {candidates(r["id"], r.get("team_id"), host)[1] for r in keyed if (r.get("team_id") or r["id"]) in own}
        second |= {candidates(p, t, host)[1] for p, t in prevs if (t or p) in own}
        own |= local.own_ids(sqlite.team(), sorted(second), me)
    eps, terms, digests = [], {}, {}
    for r in keyed:
        name = local_name(r["id"], r.get("team_id"), host, own)
        if name is None:
            report.skipped += 1
            continue
        prev = r.get("prev")
        prev_name = (local_name(prev[0], prev[1] if len(prev) > 1 else None, host, own)
                     if isinstance(prev, list) and prev and prev[0] else None)
        try:
            eps.append(to_episode(r, host, me.namespace, name, prev_name))
        except (ValidationError, ValueError, TypeError):
            report.skipped += 1
            continue
        if name != (r.get("team_id") or r["id"]):
            report.shared += 1
        if isinstance(r.get("terms"), str):
            terms[name] = r["terms"]  # the index terms the writing host stored
        if r.get("digest"):
            digests[name] = r["digest"]
    return eps, terms, digests


def _store(sqlite, me, name: str, rows: list[dict[str, Any]], report: PullReport, check: _Check) -> int:
    """One page of ``name``'s episodes into SQLite (those it signed), with its
    cursor, in one transaction. The cursor moves to the last row taken, not
    past the page: a row refused after it (one written in the host's name
    with a far ``seq``) must not carry the cursor past the host's next
    episodes; it is read again, and refused again, by the next pull."""
    ok, bad = check.rows(name, rows)
    eps, terms, digests = _named(sqlite, me, name, ok, report)
    gone = forgotten_set(sqlite.path.parent)
    if gone.ids:  # forgotten here (by its writer, or on this host): never stored again
        eps = [ep for ep in eps if ep.id not in gone.ids]
    taken = {(r["id"], r.get("seq")) for r in ok}
    last_at = max((i for i, r in enumerate(rows) if (r.get("id"), r.get("seq")) in taken), default=-1)
    at = {(r.get("id"), r.get("seq")): i for i, r in enumerate(rows)}
    for r, why in bad:
        key = (r["id"], r.get("seq"))
        check.refusals.episode(name, key, why, passed=at.get(key, len(rows)) < last_at)
    if last_at < 0:
        return 0  # nothing taken: the cursor stays
    seq, last = rows[last_at]["seq"], rows[last_at]["id"]
    apply_pulled(sqlite, name, eps, terms, seq, last, digests)
    report.hosts[name] = report.hosts.get(name, 0) + len(eps)
    return len(eps)


def partners(stores: "Stores", ids: list[str]) -> int:
    """After a push named some of this host's episodes ``id@this-host`` (another
    host had the id first): bring that host's episodes of those ids again,
    as ``id@that-host``. One of them may have been stored here under the plain
    id before this host wrote its own, which then replaced it. The pull
    cursors do not move (these are not new). Returns how many were stored."""
    store = stores.neo4j
    if store is None or not ids:
        return 0
    me = stores.identity
    report = PullReport()
    stored = 0
    hosts = graph.hosts(store, me.host)
    check = _Check(stores, hosts)
    pushed = {h["name"]: h["seq"] or 0 for h in hosts}
    for i in range(0, len(ids), PAGE):
        rows = graph.partners(store, sorted(set(ids[i : i + PAGE])))
        by_host: dict[str, list[dict[str, Any]]] = {}
        for r in rows:
            by_host.setdefault(r.get("host") or "", []).append(r)
        for host, page in by_host.items():
            eps, terms, digests = _named(stores.sqlite, me, host, check.rows(host, page)[0], report)
            # labelled just after that host's last push: the embedding pass of pulled
            # episodes (core/consumers/embed_pulled.py) reads each host's after the last it embedded,
            # and these may be older; its next push ends further on in its ledger
            seq = max([pushed.get(host, 0)] + [r.get("seq") or 0 for r in page]) + 1
            stored += apply_pulled(stores.sqlite, host, eps, terms, seq, digests=digests)
    return stored  # what it refused is refused, and counted, by the pull as well


def reset(stores: "Stores") -> None:
    """Forget the pull cursors: the next pull reads every other host's episodes
    again (after the graph was rebuilt, or to backfill a new host)."""
    PullCursors(lambda: stores.sqlite).reset()


def status(stores: "Stores") -> dict[str, Any]:
    """Per host of the namespace: episodes in the graph, here, and the lag."""
    me = stores.identity
    here = local.counts_by_host(stores.sqlite.team(), me)
    cur = PullCursors(lambda: stores.sqlite).all()
    out: dict[str, Any] = {}
    store = stores.neo4j
    there: dict[str, int] | None = None
    if store is not None:
        try:
            store.breaker.before_call()
            there = graph.counts(store)
            store.breaker.success()
        except Exception as exc:  # noqa: BLE001
            store.breaker.failure(one_line(exc))
            there = None
    refused = refused_counts(stores.state_dir)
    names = set(here) | set(there or {}) | set(cur) | set(refused)
    names.discard("")
    for name in sorted(names):
        g = ((there or {}).get(name) or {}).get("n") if there is not None else None
        n = here.get(name, 0)
        row: dict[str, Any] = {"graph": g, "local": n}
        shared = ((there or {}).get(name) or {}).get("shared")
        if shared:
            row["shared"] = shared  # its episodes of ids another host wrote first: named id@host
        if name == me.host:
            row["self"] = True
        else:
            bad = int((refused.get(name) or {}).get("episodes") or 0)  # in the graph, never to be here
            row["lag"] = None if g is None else max(g - n - bad, 0)
            row["last_pull"] = (cur.get(name) or {}).get("at")
            if name in refused:  # not signed by its pinned keys (core/team/refusals.py)
                row["refused"] = refused[name]
        out[name] = row
    if there and there.get(""):
        out["(no host)"] = {"graph": there[""]["n"], "local": None,
                            "note": "written before hosts were recorded: run ars sync backfill on the host that wrote them"}
    return out


class TeamPull:
    """The team pull as a consumer (core/consumers/consumer.py): its cursors are
    per other host, in ``memory.sqlite``; it reads the graph, not the ledger."""

    name = "team pull"

    def __init__(self, ledger: "Ledger", stores: "Stores", cursor: PullCursors):
        self.ledger, self.stores, self.cursor = ledger, stores, cursor

    def run(self, max_seconds: float = 60.0, page: int = PAGE, refusals: Refusals | None = None) -> PullReport:
        return pull(self.stores, max_seconds=max_seconds, page=page, refusals=refusals)

    def reset(self) -> None:
        self.cursor.reset()

    def partners(self, ids: list[str]) -> int:
        return partners(self.stores, ids)

    def status(self) -> dict[str, Any]:
        return status(self.stores)
