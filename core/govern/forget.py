"""``ars forget``: a memory taken back from every file ARS wrote.

Order (each step idempotent, so a crash anywhere is finished by the next
command that opens the state, ``finish_pending``):

1. ``forget.pending`` is written (the whole tombstone event) — the forget has
   started, whatever happens next;
2. the tombstone (``memory.forget``) is appended to the ledger (fsync'd): it
   is what ``ars rebuild``, the Neo4j sync and the team's pull act on;
3. ``forgotten.json`` gets the selection: from here every reader filters it;
4. the ledger's lines holding the text are patched in place (scrub.py);
5. SQLite rows and FTS entries deleted (secure_delete, FTS merged, WAL truncated);
6. vectors deleted from ``vectors.sqlite`` the same way;
7. checkpoints' recall results scrubbed; ``startup-context.md`` removed
   (it is regenerated on demand);
8. ``forget.pending`` removed.

Neo4j and the team hosts are not reached here: the sync worker carries the
tombstone to the graph at the next ``ars sync run`` (graph_forget.py), and
each other host drops its pulled copy at its next pull. The report says so.

Forgetting is the supervisor's decision: with a supervisor key the caller
passes an unlocked signer and the tombstone carries the signature over what
is forgotten; without a key the tombstone says ``unverified``.
"""

from __future__ import annotations

import json
from core.infra.sqlite_lib import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from core.errors import BadQuery
from core.infra.fsutil import atomic_write
from core.ledger.ledger import Event, content_id
from core.infra.writer_lock import WriterBusy
from core.govern import scrub, tombstone
from core.events import FORGET_EVENT

if TYPE_CHECKING:
    from core.memory.memory import Memory

QUERY_K = 20  # a --query forgets at most this many episodes (each listed before it goes)
CHECKPOINTS = "checkpoints"
STARTUP_CONTEXT = "startup-context.md"


class ForgetFailed(OSError):
    """The forget could not finish (read-only state, disk full): one line; the
    next command that opens the state finishes it."""


@dataclass
class Selection:
    ids: list[str] = field(default_factory=list)
    sessions: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    query: str = ""
    preview: list[dict[str, str]] = field(default_factory=list)  # id, session, summary: what will go


@dataclass
class ForgetReport:
    event_id: str = ""
    ids: list[str] = field(default_factory=list)
    removed: dict[str, Any] = field(default_factory=dict)  # where -> what was removed there
    pending_on_peers: list[str] = field(default_factory=list)  # what is still to be removed elsewhere
    decided_by: str = "unverified"
    resumed: bool = False  # finished a forget a crash had interrupted

    def as_dict(self) -> dict[str, Any]:
        return {"event_id": self.event_id, "ids": self.ids, "removed": self.removed,
                "pending_on_peers": self.pending_on_peers, "decided_by": self.decided_by, "resumed": self.resumed}


# -- choosing what goes ------------------------------------------------------------------
def select(memory: "Memory", *, ids: Sequence[str] = (), session: str | None = None,
           source: str | None = None, query: str | None = None, k: int = QUERY_K) -> Selection:
    """What a forget will remove; BadQuery (one line) when it selects nothing."""
    given = sum(bool(x) for x in (list(ids), session, source)) + (query is not None)
    if given == 0:
        raise BadQuery("nothing to forget: give an episode id, --session ID, --source FILE or --query TEXT")
    sel = Selection()
    conn = memory.sqlite.team()
    if ids:
        for eid in ids:
            if not eid or not eid.strip():
                raise BadQuery("empty episode id: give one as `ars recall --json` prints it")
            if not memory.sqlite.has(eid):
                raise BadQuery(f"unknown episode id {eid!r}: `ars recall <words> --json` lists ids; "
                               "nothing was forgotten")
        sel.ids = list(dict.fromkeys(ids))
    if session is not None:
        if not session.strip():
            raise BadQuery("empty --session: give a session id as `ars recall --json` prints it")
        got = [r[0] for r in conn.execute("SELECT id FROM episodes WHERE session_id = ? ORDER BY rowid", (session,))]
        if not got:
            raise BadQuery(f"no episode of session {session!r}: nothing was forgotten")
        sel.sessions = [session]
        sel.ids += [i for i in got if i not in sel.ids]
    if source is not None:
        sel_ids, path = _source_ids(memory, source)
        sel.sources = [path]
        sel.ids += [i for i in sel_ids if i not in sel.ids]
    if query is not None:
        if not query.strip():
            raise BadQuery("empty --query: give the words of the memory to forget (each match is listed first)")
        result = memory.recall(query, k=k)
        got = [h.episode_id for h in result.hits]
        if not got:
            raise BadQuery(f"no memory matches {query.strip()[:60]!r}: nothing was forgotten")
        sel.query = query
        sel.ids += [i for i in got if i not in sel.ids]
    # a session whose raw file holds nothing else: its file is never scanned again
    if sel.sessions and not sel.sources:
        ids_set = set(sel.ids)
        for path, f in memory.files.registry.files().items():
            spans = [s[2] for s in f.spans]
            if spans and all(s in ids_set for s in spans):
                sel.sources.append(path)
    sel.preview = _preview(memory, sel.ids)
    return sel


def _source_ids(memory: "Memory", source: str) -> tuple[list[str], str]:
    files = memory.files.registry.files()
    path = str(Path(source).expanduser().resolve())
    f = files.get(path) or files.get(source)
    if f is None:
        raise BadQuery(f"--source {source}: not a file ARS ingested (`ars doctor` lists the sources); "
                       "nothing was forgotten")
    return list(dict.fromkeys(s[2] for s in f.spans)), f.path


def _preview(memory: "Memory", ids: list[str]) -> list[dict[str, str]]:
    out = []
    for eid in ids:
        ep = memory.sqlite.get(eid)
        if ep is None:
            out.append({"id": eid, "session": "", "summary": "(pulled copy gone, or not in SQLite)"})
            continue
        text = " ".join((ep.summary or ep.text or "").split())
        out.append({"id": eid, "session": ep.session_id, "host": ep.host or "",
                    "summary": text[:100] + ("…" if len(text) > 100 else "")})
    return out


# -- the signed decision -----------------------------------------------------------------
def decision_payload(sel: Selection, why: str, at: str) -> dict[str, Any]:
    return {"v": 1, "kind": "forget", "ids": sorted(sel.ids), "sessions": sorted(sel.sessions),
            "sources": sorted(sel.sources), "why": why, "decided_at": at}


def verify(data: dict[str, Any], pin: str) -> tuple[bool, str]:
    """Whether a tombstone is signed by the pinned supervisor key over exactly what it forgets."""
    from core.inbox.signing import canonical, verify_text

    text, why = verify_text(data.get("decision") or {}, pin)
    if text is None:
        return False, why
    want = canonical({"v": 1, "kind": "forget", "ids": sorted(data.get("ids") or []),
                      "sessions": sorted(data.get("sessions") or []), "sources": sorted(data.get("sources") or []),
                      "why": data.get("why", ""), "decided_at": data.get("at", "")})
    return (True, "") if text == want else (False, "the signature is over another selection")


# -- forgetting ----------------------------------------------------------------------------
def forget(memory: "Memory", sel: Selection, *, why: str = "", signer: Any = None) -> ForgetReport:
    """Forget ``sel`` everywhere in this state directory before returning."""
    if not sel.ids and not sel.sources:
        raise BadQuery("nothing selected: nothing was forgotten")
    at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    me = memory.identity
    origins = memory.sqlite.origins(sel.ids, me) if sel.ids else {}
    own = [i for i in sel.ids if (origins.get(i) or {}).get("host", me.host) == me.host]
    # no query text: the words that found a secret would keep it in the ledger
    data: dict[str, Any] = {"ids": sel.ids, "sessions": sel.sessions, "sources": sel.sources, "why": why, "at": at, "host": me.host, "own": own,
                            "pulled": [i for i in sel.ids if i not in set(own)]}
    if signer is not None:
        from core.inbox.signing import canonical

        data["decision"] = signer.sign_text(canonical(decision_payload(sel, why, at)))
        data["decided_by"] = signer.fingerprint
    else:
        data["decided_by"] = "unverified (no supervisor key: `ars supervisor init`)"
    event = Event(content_id("forget", data), FORGET_EVENT, data, ts=at)
    try:
        with memory.writer("ars forget"):
            pending = {"event_id": event.event_id, "type": FORGET_EVENT, "ts": at, "data": data,
                       "ledger_size": memory.ledger.size()}
            tombstone.write_pending(memory.state_dir, pending)
            memory.ledger.append([event])
            return _apply(memory, pending)
    except (OSError, sqlite3.OperationalError) as exc:
        raise _failed(exc, tombstone.read_pending(memory.state_dir) is not None) from None


def _failed(exc: Exception, started: bool) -> ForgetFailed:
    import errno

    if isinstance(exc, ForgetFailed):
        return exc
    what = getattr(exc, "strerror", None) or " ".join(str(exc).split())[:120]
    code = getattr(exc, "errno", None)
    if code in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
        fix = "free some space"
    elif code in (errno.EACCES, errno.EPERM, errno.EROFS):
        fix = "make the state directory writable"
    else:
        fix = "fix that"
    if started:
        return ForgetFailed(f"forget started but could not finish ({what}): {fix}, then run any ars command: "
                            "it finishes the forget (recall already leaves it out)")
    return ForgetFailed(f"nothing was forgotten ({what}): {fix}, then run ars forget again")


def finish_pending(memory: "Memory", wait: bool = True) -> ForgetReport | None:
    """Finish a forget a crash interrupted (any command that opens the state calls this)."""
    if tombstone.read_pending(memory.state_dir) is None:
        return None
    try:
        with memory.writer("ars forget (finishing)", blocking=wait):
            pending = tombstone.read_pending(memory.state_dir)  # the forget itself may have finished meanwhile
            if pending is None:
                return None
            if not any(e.event_id == pending["event_id"]
                       for e in memory.ledger.read(int(pending.get("ledger_size") or 0), types=(FORGET_EVENT,))):
                memory.ledger.append([Event(pending["event_id"], FORGET_EVENT, pending["data"], ts=pending.get("ts", ""))])
            report = _apply(memory, pending)
            report.resumed = True
            return report
    except WriterBusy:
        return None  # the forget is running in another process, or an ingest is: filtered meanwhile


def _apply(memory: "Memory", pending: dict[str, Any]) -> ForgetReport:
    """Steps 3-8, under the writer lock; idempotent."""
    data = pending["data"]
    state = Path(memory.state_dir)
    ids = set(data.get("ids") or [])
    rep = ForgetReport(event_id=pending["event_id"], ids=sorted(ids), decided_by=data.get("decided_by", "unverified"))
    tombstone.merge(state, data)
    at, lines_from, applied = memory.sqlite.ledger_lines(sorted(ids))
    patches = list(scrub.indexed_patches(memory.ledger.path, ids, at, lines_from, applied))
    rep.removed["ledger"] = f"{memory.ledger.patch(patches)} lines scrubbed in place"
    memory.sqlite.drop_ledger_lines(sorted(ids))
    n, touched = memory.sqlite.forget(sorted(ids))
    if touched:
        # the neighbours' new contexts go to Neo4j with the tombstone (graph_forget.py)
        _note_touched(state, pending["event_id"], touched)
    rep.removed["sqlite"] = f"{n} episodes (rows, full-text entries, {len(touched)} neighbours' context)"
    rep.removed["vectors"] = f"{scrub.forget_vectors(state, ids)} vectors"
    rep.removed["checkpoints"] = f"{_scrub_checkpoints(state, ids)} files scrubbed"
    from core.capture.checkpoints import forget as forget_captured

    rep.removed["capture"] = f"{forget_captured(state, ids)} capture checkpoints without it"
    ctx = state / STARTUP_CONTEXT
    if ctx.exists():
        ctx.unlink()
        rep.removed["startup-context.md"] = "removed (regenerated on demand)"
    if data.get("sources"):
        rep.removed["files tier"] = f"{len(data['sources'])} source files never scanned again"
    tombstone.clear_pending(state)
    rep.pending_on_peers = _peers_line(memory, data)
    return rep


def _note_touched(state: Path, event_id: str, touched: list[str]) -> None:
    path = state / "forget-contexts.json"
    try:
        cur = json.loads(path.read_text())
    except (OSError, ValueError):
        cur = {}
    cur[event_id] = touched
    atomic_write(path, json.dumps(cur))


def _scrub_checkpoints(state: Path, ids: set[str]) -> int:
    root = state / CHECKPOINTS
    if not root.is_dir() or not ids:
        return 0
    n = 0
    for path in sorted(root.iterdir()):
        if not path.is_file() or path.name.startswith("."):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if '"episode_id"' not in text:
            continue
        if path.name.endswith(".jsonl"):
            lines, changed = scrub.scrub_json_file_lines(text.splitlines(keepends=True), ids)
            if changed:
                atomic_write(path, "".join(lines))
                n += 1
        elif path.name.endswith(".json"):
            try:
                d = json.loads(text)
            except ValueError:
                continue
            if scrub.scrub_json(d, ids):
                atomic_write(path, json.dumps(d, ensure_ascii=False, indent=1))
                n += 1
    return n


def _peers_line(memory: "Memory", data: dict[str, Any]) -> list[str]:
    out = []
    if memory.settings.neo4j_uri:
        if data.get("own"):
            out.append(f"neo4j: {len(data['own'])} episodes are deleted from the graph at the next `ars sync run`; "
                       "every team host drops its pulled copy at its next pull after that")
    elif data.get("own"):
        out.append("neo4j: not configured here (if this state was ever synced, the graph drops them at the next "
                   "`ars sync run` with ARS_NEO4J_URI set)")
    if data.get("pulled"):
        out.append(f"{len(data['pulled'])} of them are other hosts' episodes: forgotten here only; forget them "
                   "on the host that wrote them to remove them from the team")
    return out
