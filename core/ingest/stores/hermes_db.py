"""Hermes Agent's ``~/.hermes/state.db``, read in place.

Schema: hermes-agent 0.19.0 ``hermes_state.py`` ``SCHEMA_SQL`` (schema version 22;
the repository's ``hermes_state_common.py`` is at 30 with the same ``sessions`` and
``messages`` columns read here). ``sessions`` holds one row per session (``source``
is the platform, ``parent_session_id`` the session a continuation carries on);
``messages`` one row per message in ``id`` order: ``content`` is text, or
``\\x00json:`` + JSON for multimodal parts; ``tool_calls`` is OpenAI-style JSON.

Which rows: the live ones (``active = 1``) and those a compaction archived
(``compacted = 1``, the real earlier turns): Hermes' own display set (schema 30's
display indexes select exactly ``active = 1 OR compacted = 1``); rows a rewind took
back (``active = 0, compacted = 0``) and ``display_kind = 'hidden'`` scaffolding are
left out. A compaction summary row (schema 30 flags it ``_compressed_summary = 1``;
older ones are known by ``agent/context_compressor.py``'s ``SUMMARY_PREFIX`` and its
historical forms, ``[CONTEXT SUMMARY]:``, or a merge into a tail message after
``[END OF PRIOR CONTEXT — COMPACTION SUMMARY BELOW]``) becomes a summary line with
the handoff boilerplate removed, never the user's words. The tail messages a
compaction copied back as live rows are read once (by ``display_identity`` where
the schema has it, else by role, content and tool calls).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any, Iterator

from core.models import Episode
from core.ingest.formats.lines import loads
from core.ingest.formats.message_text import block_text, role_line, to_datetime
from core.ingest.formats.parsed import Parsed
from core.ingest.formats.sessions import Msg, SessionBuilder, SpanCollector
from core.ingest.formats.hermes import _SESSION_META, SOURCE, _is_harness, _message
from core.ingest.stores.sqlite_ro import has_table, read_store

CONTENT_JSON_PREFIX = "\x00json:"
SUMMARY_STARTS = ("[CONTEXT COMPACTION", "[CONTEXT SUMMARY]:")
SUMMARY_PREFIX_END = "avoid repeating it:"  # every SUMMARY_PREFIX form so far ends with these words
SUMMARY_END_MARKER = "--- END OF CONTEXT SUMMARY — respond to the message below, not the summary above ---"
MERGED_HEADER = "[PRIOR CONTEXT — for reference only; not a new message]"
MERGED_DELIMITER = "[END OF PRIOR CONTEXT — COMPACTION SUMMARY BELOW]"


def decode_content(value: Any) -> Any:
    """``\\x00json:[...]`` -> the parts; other values as stored."""
    if isinstance(value, str) and value.startswith(CONTENT_JSON_PREFIX):
        try:
            return loads(value[len(CONTENT_JSON_PREFIX):])
        except ValueError:
            return value[len(CONTENT_JSON_PREFIX):]
    return value


def split_summary(text: str, flagged: bool = False) -> tuple[str, str] | None:
    """(prior tail text, summary body) when ``text`` is a compaction summary (or ``flagged`` one), else None."""
    prior = ""
    body = text.strip()
    if MERGED_DELIMITER in body:
        prior, body = body.split(MERGED_DELIMITER, 1)
        prior = prior.replace(MERGED_HEADER, "", 1).strip()
        body = body.strip()
    if not body.startswith(SUMMARY_STARTS):
        if not flagged:
            return None
        return prior, body.removesuffix(SUMMARY_END_MARKER).strip()
    if body.startswith("[CONTEXT SUMMARY]:"):
        body = body[len("[CONTEXT SUMMARY]:"):]
    elif SUMMARY_PREFIX_END in body:
        body = body.split(SUMMARY_PREFIX_END, 1)[1]
    else:
        body = body.split("\n", 1)[1] if "\n" in body else ""
    body = body.strip()
    if body.endswith(SUMMARY_END_MARKER):
        body = body[: -len(SUMMARY_END_MARKER)].rstrip()
    return prior, body


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}


def _kept_rows(cols: set[str]) -> str:
    if "active" not in cols:
        return "1"
    return "(active = 1 OR compacted = 1)" if "compacted" in cols else "active = 1"


def list_sessions(db: Path) -> dict[str, str]:
    """Session id -> its version (last message id, row counts, title, end): what changed is read again."""
    def read(conn: sqlite3.Connection) -> dict[str, str]:
        if not (has_table(conn, "sessions") and has_table(conn, "messages")):
            return {}
        cols = _columns(conn, "messages")
        active = "sum(active)" if "active" in cols else "0"
        counts = {sid: f"{last}:{n}:{live}" for sid, last, n, live in conn.execute(
            f"SELECT session_id, max(id), count(*), {active} FROM messages GROUP BY session_id")}
        out = {}
        for sid, title, ended, parent in conn.execute("SELECT id, title, ended_at, parent_session_id FROM sessions"):
            # the title is hashed: the cursor file keeps no conversation text (ars forget never has to scrub it)
            meta = hashlib.sha1(json.dumps([title, ended, parent], default=str).encode("utf-8", "surrogatepass"))
            out[str(sid)] = f"{counts.get(sid, '-:0:0')}:{meta.hexdigest()[:16]}"
        return out
    return read_store(db, read)


def read_sessions(db: Path, session_ids: list[str]) -> list[tuple[dict, list[dict]]]:
    """(session row, its kept message rows in id order) for each id, in one snapshot."""
    def read(conn: sqlite3.Connection) -> list[tuple[dict, list[dict]]]:
        conn.row_factory = sqlite3.Row
        cols = _columns(conn, "messages")
        optional = ", ".join(c if c in cols else f"NULL AS {c}" for c in _OPTIONAL_COLUMNS)
        out = []
        for sid in session_ids:
            row = conn.execute("SELECT * FROM sessions WHERE id = ?", (sid,)).fetchone()
            if row is None:
                continue
            session = {k: row[k] for k in row.keys() if k != "system_prompt"}
            msgs = [dict(m) for m in conn.execute(
                f"SELECT id, role, content, tool_calls, tool_name, timestamp, {optional} FROM messages "
                f"WHERE session_id = ? AND {_kept_rows(cols)} ORDER BY id", (sid,))]
            out.append((session, msgs))
        return out
    return read_store(db, read)


# newer schemas' columns, read when present (NULL otherwise)
_OPTIONAL_COLUMNS = ("compacted", "_compressed_summary", "display_kind", "display_identity")


def _row_key(m: dict) -> tuple:
    """What makes two rows one message: Hermes' display identity, else role, content and tool calls."""
    if m.get("display_identity") is not None:
        return ("identity", bytes(m["display_identity"]) if not isinstance(m["display_identity"], str)
                else m["display_identity"])
    return (m.get("role"), m.get("content"), m.get("tool_calls"))


def session_episodes(db: Path, session: dict, rows: list[dict], parsed: Parsed) -> Iterator[Episode]:
    sid = str(session["id"])
    platform = str(session.get("source") or "")
    b = SessionBuilder(db, SOURCE, sid, agent="hermes", channel=platform,
                       meta={k: session[k] for k in _SESSION_META if session.get(k) not in (None, "")},
                       spool=parsed.spool)
    if platform and platform not in ("cli", "local"):
        b.hints.channels.append(platform)
    archived = {_row_key(m) for m in rows if m.get("compacted")}
    after_harness = False
    for m in rows:
        no = int(m["id"])
        if m.get("display_kind") == "hidden":
            continue  # model-facing scaffolding Hermes never shows
        if not m.get("compacted") and _row_key(m) in archived:
            continue  # a tail message the compaction copied back: read once, as archived
        m = {**m, "content": decode_content(m.get("content"))}
        ts = to_datetime(m.get("timestamp")) or to_datetime(session.get("started_at"))
        text = block_text(m["content"]).strip() if m.get("content") is not None else ""
        summary = split_summary(text, bool(m.get("_compressed_summary"))) \
            if m.get("role") in ("user", "assistant") else None
        if summary is not None:
            prior, body = summary
            if prior:
                msg = _message({**m, "content": prior}, no, ts)
                if msg is not None:
                    b.add(msg)
            if body:
                b.add(Msg(no, "summary", role_line("compaction summary", body), ts))
            continue
        if after_harness and m.get("role") == "assistant" and not m.get("tool_calls"):
            after_harness = False
            continue
        after_harness = _is_harness(m)
        msg = _message(m, no, ts)
        if msg is not None:
            b.add(msg)
    title = session.get("title") if isinstance(session.get("title"), str) else ""
    yield from b.finish(parsed, SpanCollector(), title=(title or "").strip())
