"""``ars redact --scan``: secrets already in an older store, taken out everywhere.

Every episode SQLite holds is run through ``redact.redact_episode`` (the
same code that keeps secrets out at ingest). An episode that changes is
rewritten in place rather than dropped, the way forget reaches every file:

1. ``redact.pending`` is written (ids only, and the ledger size);
2. the redacted versions are appended to the ledger as new ``episode.upsert``
   events (fsync'd): from here a rebuild gives the redacted text;
3. the older lines of those episodes (before the new ones) are patched in
   place to ``episode.forgotten`` lines of the same length (scrub.py);
4. SQLite applies the new versions with ``secure_delete`` on, merges the FTS
   index and truncates the WAL; vectors of those episodes are deleted (the
   embedding consumer re-embeds the redacted text at the next sync);
5. checkpoints' recall results of those episodes are redacted;
6. ``redact.pending`` is removed.

The new upsert events reach Neo4j at the next ``ars sync run`` (MERGE
overwrites the node's text) and each team host at its next pull (the new
version replaces its copy). A SIGKILL anywhere: the next command that opens
the state finishes steps 3-6 (``finish_pending``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.infra.fsutil import atomic_write
from core.events import EPISODE_EVENT
from core.ledger.ledger import Event, content_id
from core.infra.sqlite_lib import FTS_SECURE_DELETE
from core.infra.writer_lock import WriterBusy
from core.govern import scrub

if TYPE_CHECKING:
    from core.memory.memory import Memory

PENDING = "redact.pending"
PAGE = 1000


@dataclass
class ScanReport:
    scanned: int = 0
    episodes: list[str] = field(default_factory=list)  # ids rewritten
    kinds: dict[str, int] = field(default_factory=dict)  # placeholder kind -> how many
    removed: dict[str, str] = field(default_factory=dict)
    pending_on_peers: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"scanned": self.scanned, "episodes": self.episodes, "kinds": self.kinds, "removed": self.removed,
                "pending_on_peers": self.pending_on_peers}


def find(memory: "Memory") -> tuple[ScanReport, list]:
    """Episodes of this host holding a secret, as (report, redacted episodes)."""
    from core.govern.redact import PLACEHOLDER_RE, redact_episode

    rep, fixed = ScanReport(), []
    me = memory.identity
    conn = memory.sqlite.team()
    last = -1
    while True:
        rows = conn.execute("SELECT rowid, id FROM episodes WHERE rowid > ? ORDER BY rowid LIMIT ?",
                            (last, PAGE)).fetchall()
        if not rows:
            break
        last = rows[-1][0]
        origins = memory.sqlite.origins([r[1] for r in rows], me)
        for _, eid in rows:
            if origins.get(eid, {}).get("host", me.host) != me.host:
                continue  # another host's episode: its writer's scan redacts it, and the pull brings it
            ep = memory.sqlite.get(eid)
            if ep is None:
                continue
            rep.scanned += 1
            new = redact_episode(ep)
            if new is ep:
                continue
            before = set(PLACEHOLDER_RE.findall(_all_text(ep)))
            for kind in PLACEHOLDER_RE.findall(_all_text(new)):
                if kind not in before:
                    rep.kinds[kind] = rep.kinds.get(kind, 0) + 1
            rep.episodes.append(eid)
            fixed.append(new)
    return rep, fixed


def _all_text(ep) -> str:
    return json.dumps(ep.model_dump(mode="json", include={"text", "summary", "topics", "entities", "meta"}),
                      ensure_ascii=False)


def scan(memory: "Memory", dry_run: bool = False) -> ScanReport:
    rep, fixed = find(memory)
    if dry_run or not fixed:
        return rep
    ident = memory.identity
    eps = [ep.model_copy(update={"namespace": ident.namespace, "host": ident.host}) for ep in fixed]
    events = [Event(content_id("ep", ep.model_dump(mode="json")), EPISODE_EVENT, ep.model_dump(mode="json"))
              for ep in eps]
    with memory.writer("ars redact --scan"):
        stop = memory.ledger.size()
        atomic_write(Path(memory.state_dir) / PENDING, json.dumps({"ids": rep.episodes, "stop": stop}))
        memory.ledger.append(events)
        _apply(memory, rep.episodes, stop, rep)
    if memory.settings.neo4j_uri:
        rep.pending_on_peers.append("neo4j: the redacted versions replace the old ones at the next `ars sync run`; "
                                    "every team host gets them at its next pull")
    return rep


def finish_pending(memory: "Memory", wait: bool = True) -> bool:
    path = Path(memory.state_dir) / PENDING
    if not path.exists():
        return False
    try:
        with memory.writer("ars redact --scan (finishing)", blocking=wait):
            try:
                d = json.loads(path.read_text())
            except FileNotFoundError:
                return False
            except ValueError:
                path.unlink()  # written atomically: a damaged one never started
                return False
            _apply(memory, d.get("ids") or [], int(d.get("stop") or 0), ScanReport())
            return True
    except WriterBusy:
        return False


def _apply(memory: "Memory", ids: list[str], stop: int, rep: ScanReport) -> None:
    from core.govern.forget import _scrub_checkpoints

    state = Path(memory.state_dir)
    wanted = set(ids)
    n = memory.ledger.patch(list(scrub.ledger_patches(memory.ledger.path, wanted, stop=stop)))
    rep.removed["ledger"] = f"{n} older lines scrubbed in place; the redacted versions appended"
    conn = memory.sqlite.team()
    conn.execute("PRAGMA secure_delete=ON")
    fts_option = "INSERT INTO episodes_fts(episodes_fts, rank) VALUES ('secure-delete', ?)"
    if FTS_SECURE_DELETE:  # the replaced rows' postings go at once (core/infra/sqlite_lib.py)
        with conn:
            conn.execute(fts_option, (1,))
    memory._apply_ledger(memory.sqlite)  # the redacted versions replace the rows (freed pages zeroed)
    with conn:
        if FTS_SECURE_DELETE:
            conn.execute(fts_option, (0,))
        else:  # no secure-delete: the old postings go only with a merge of the whole index
            conn.execute("INSERT INTO episodes_fts(episodes_fts) VALUES ('optimize')")
    memory.sqlite.checkpoint(conn)
    how = "FTS secure-delete" if FTS_SECURE_DELETE else "index merged"
    rep.removed["sqlite"] = f"{len(ids)} episodes rewritten (secure_delete, {how}, WAL truncated)"
    rep.removed["vectors"] = f"{scrub.forget_vectors(state, wanted)} vectors (re-embedded at the next sync)"
    rep.removed["checkpoints"] = f"{_scrub_checkpoints(state, wanted)} files scrubbed"
    ctx = state / "startup-context.md"
    if ctx.exists():
        ctx.unlink()
    (state / PENDING).unlink(missing_ok=True)
