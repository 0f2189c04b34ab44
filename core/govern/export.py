"""``ars export``: what is remembered now, as JSON lines or Markdown.

Read from SQLite (it holds this host's episodes and every pulled one, as they
are now: later versions replaced earlier ones, forgotten ones deleted), with
the forgotten set checked again (a forget a crash interrupted is filtered
too). JSON lines are ``Episode`` objects, one a line: ``ars ingest --format
episodes`` of the file into an empty state gives the same ids and text.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Iterator

from core.errors import BadQuery
from core.team.scope import parse_scope
from core.govern import tombstone

if TYPE_CHECKING:
    from core.models import Episode
    from core.memory.memory import Memory

FORMATS = ("jsonl", "markdown")
PAGE = 1000


def parse_since(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        dt = datetime.fromisoformat(text.strip())
    except ValueError:
        raise BadQuery(f"--since {text[:40]!r} is not a date: give one like 2026-11-01 or "
                       "2026-11-01T10:00:00+00:00") from None
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def episodes(memory: "Memory", *, since: str | None = None, session: str | None = None,
             scope: str | None = None) -> Iterator["Episode"]:
    """The episodes to export, in the order they were stored."""
    after = parse_since(since)
    sc = parse_scope(scope)
    if session is not None and not session.strip():
        raise BadQuery("empty --session: give a session id, or leave --session out")
    gone = tombstone.load(memory.state_dir)
    conn = memory.sqlite.team()
    sql = "SELECT rowid, id FROM episodes WHERE rowid > ?" + (" AND session_id = ?" if session else "")
    sql += " ORDER BY rowid LIMIT ?"
    last = -1
    while True:
        params = [last, *([session] if session else []), PAGE]
        rows = conn.execute(sql, params).fetchall()
        if not rows:
            return
        last = rows[-1][0]
        ids = [r[1] for r in rows if r[1] not in gone.ids]
        origins = memory.sqlite.origins(ids, memory.identity) if sc else {}
        for eid in ids:
            ep = memory.sqlite.get(eid)
            if ep is None or gone.covers(ep.id, ep.session_id):
                continue
            if after is not None:
                ts = ep.last_ts or ep.first_ts
                if ts is None or (ts if ts.tzinfo else ts.replace(tzinfo=timezone.utc)) < after:
                    continue
            if sc and not sc.admits(origins.get(eid)):
                continue
            yield ep


def export(memory: "Memory", fmt: str = "jsonl", **kw) -> Iterator[str]:
    """Lines (each ending in a newline) of the export in ``fmt``."""
    if fmt not in FORMATS:
        raise BadQuery(f"unknown --format {fmt!r}: choose jsonl (re-ingestable) or markdown")
    eps = episodes(memory, **kw)
    if fmt == "jsonl":
        for ep in eps:
            yield json.dumps(ep.model_dump(mode="json", exclude={"namespace", "host"}), ensure_ascii=False) + "\n"
        return
    yield "# ARS memory export\n\n"
    for ep in eps:
        yield _markdown(ep)


def _markdown(ep: "Episode") -> str:
    head = f"## {ep.summary or ep.id}\n\n"
    meta = [f"- id: `{ep.id}`", f"- source: {ep.source}"]
    if ep.session_id:
        meta.append(f"- session: `{ep.session_id}`")
    if ep.first_ts or ep.last_ts:
        meta.append(f"- when: {(ep.first_ts or ep.last_ts).isoformat()}")
    if ep.host:
        meta.append(f"- host: {ep.host}")
    if ep.topics:
        meta.append(f"- topics: {', '.join(ep.topics)}")
    body = ep.text.replace("\n#", "\n\\#")
    return head + "\n".join(meta) + "\n\n" + body + "\n\n"
