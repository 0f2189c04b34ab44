"""OpenClaw 2026.8+: one agent's sessions, from every copy that exists.

Layout (openclaw@2026.9.6 ``docs/reference/database-schemas/layout.md``,
``docs/reference/session-management-compaction/maintenance.md``,
``dist/doctor-session-sqlite-*.mjs``), under ``~/.openclaw/agents/<agentId>/``:

* ``agent/openclaw-agent.sqlite``: ``transcript_events(session_id, seq, event_json |
  event_zstd)``, one transcript event a row in ``seq`` order (``event_zstd`` is a
  plain zstd frame of the UTF-8 JSON, ``event_utf8_bytes`` long);
  ``session_transcript_cold_archives`` (a session moved out to cold storage: a
  file ``sessions/cold/<sha256>.jsonl.zst``, or the row's ``archive_blob``);
  ``session_transcript_archives`` (reset/deleted generations, identity or zstd);
* ``session-sqlite-import-archive/<key>.<name>.jsonl.imported-<ms>``: legacy JSONL
  the import moved aside (its events are in the database too);
* ``sessions/*.jsonl`` and their ``.reset.<ts>`` / ``.deleted.<ts>`` archives.

A session's events are the union of its copies, each event once (by its ``id``),
oldest copies first; its episodes come from the same entry handling as the legacy
JSONL (``formats/openclaw.py``), so a session read from a legacy file and from the
database gives the same episode ids.
"""

from __future__ import annotations

import hashlib
import io
import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from core.ingest.formats.lines import MAX_LINE_BYTES, loads
from core.ingest.formats.parsed import Parsed, storable
from core.ingest.formats.sessions import SpanCollector
from core.ingest.formats.openclaw import episodes_from_entries
from core.ingest.formats.openclaw_tree import TreeScan
from core.models import Episode
from core.ingest.stores.layout import IMPORT_ARCHIVE, OpenClawAgent, transcript_kind
from core.ingest.stores.sqlite_ro import has_table, read_store

MAX_EVENT_BYTES = 4 * 1024 * 1024  # the schema's bound on one event (transcript_events CHECK)


@dataclass
class Copy:
    """One copy of (part of) a session: where it is and how to read its events."""

    unit: str  # cursor key: what changed is read again
    key: str  # its version: seq/count, a hash, a file signature
    order: int  # older copies first: archives, legacy files, import archive, cold, live
    origin: Path
    load: Callable[[], Iterator[Any]]


@dataclass
class SessionCopies:
    session_id: str
    copies: list[Copy] = field(default_factory=list)


def _zstd_text(data: bytes, size: int | None = None, dctx=None) -> str:
    """One zstd frame as text (``size``: its recorded length, when the row has one)."""
    import zstandard

    dctx = dctx or zstandard.ZstdDecompressor()
    out = dctx.decompress(data, max_output_size=size) if size else dctx.stream_reader(io.BytesIO(data)).read()
    return out.decode("utf-8")


def _jsonl(text: str) -> Iterator[Any]:
    for line in text.splitlines():
        if line.strip():
            try:
                yield loads(line)
            except ValueError:
                yield {"_bad": line[:200]}


def _file_jsonl(path: Path) -> Iterator[Any]:
    if path.name.endswith(".zst"):
        import zstandard

        with open(path, "rb") as fh, zstandard.ZstdDecompressor().stream_reader(fh) as reader:
            for raw in io.TextIOWrapper(reader, encoding="utf-8", errors="replace"):
                if raw.strip():
                    yield _load_line(raw)
        return
    with open(path, "rb") as fh:
        for raw in fh:
            if len(raw) > MAX_LINE_BYTES:
                yield {"_bad": f"line over {MAX_LINE_BYTES} bytes"}
            elif raw.strip():
                yield _load_line(raw)


def _load_line(raw: str | bytes) -> Any:
    try:
        return loads(raw)
    except ValueError:
        return {"_bad": str(raw[:200])}


def _file_key(path: Path) -> str:
    st = path.stat()
    return f"{st.st_size}:{st.st_mtime_ns}"


def _header_id(path: Path) -> str:
    """The session id of a legacy JSONL copy: its header's ``id``, else its name."""
    try:
        if path.name.endswith(".zst"):
            obj = next(iter(_file_jsonl(path)), None)
        else:
            with open(path, "rb") as fh:
                obj = loads(fh.readline(MAX_LINE_BYTES))
        if isinstance(obj, dict) and obj.get("type") == "session" and isinstance(obj.get("id"), str):
            return obj["id"].strip()
    except Exception:  # noqa: BLE001 - unreadable here (zstd, I/O, JSON): named by its file; reading it reports why
        pass
    return path.name.split(".jsonl")[0]


def _db_copies(agent: OpenClawAgent, conn: sqlite3.Connection) -> list[tuple[str, Copy]]:
    """The database's copies, listed with their versions (no event bodies read yet)."""
    db = agent.db
    out: list[tuple[str, Copy]] = []
    if not has_table(conn, "transcript_events"):
        return out
    gens: dict[str, str] = {}
    if has_table(conn, "transcript_rewrite_watermarks"):
        gens = dict(conn.execute("SELECT session_id, generation FROM transcript_rewrite_watermarks").fetchall())
    for sid, last, count in conn.execute(
            "SELECT session_id, max(seq), count(*) FROM transcript_events GROUP BY session_id"):
        out.append((sid, Copy(f"db:{sid}", f"{last}:{count}:{gens.get(sid, '')}", 4, db,
                              _db_loader(db, sid))))
    if has_table(conn, "session_transcript_cold_archives"):
        for sid, name, sha, storage in conn.execute(
                "SELECT session_id, archive_name, archive_sha256, storage FROM session_transcript_cold_archives"):
            path = agent.sessions / "cold" / name
            out.append((sid, Copy(f"cold:{sid}", sha, 3, path if storage == "file" else db,
                                  _cold_loader(db, sid, path, storage))))
    if has_table(conn, "session_transcript_archives"):
        for sid, gen, sha, created in conn.execute(
                "SELECT session_id, generation, archive_sha256, created_at FROM session_transcript_archives"):
            out.append((sid, Copy(f"archive:{sid}:{gen}", sha, 0, db, _archive_loader(db, sid, gen))))
    return out


def _read_events(conn: sqlite3.Connection, sids: list[str]) -> dict[str, list[Any]]:
    """The events of the sessions ``sids``, decoded, in ``seq`` order."""
    import zstandard

    dctx = zstandard.ZstdDecompressor()  # one per read: creating it costs more than a small frame
    out: dict[str, list[Any]] = {sid: [] for sid in sids}
    for sid in sids:
        rows = conn.execute("SELECT event_json, event_zstd, event_utf8_bytes FROM transcript_events "
                            "WHERE session_id = ? ORDER BY seq", (sid,))
        out[sid] = [_load_line(text) if text is not None else _load_line(_zstd_text(blob, size, dctx))
                    for text, blob, size in rows]
    return out


def session_events(db: Path, session: str) -> list[Any]:
    """One session's live events from the agent database, decoded, in ``seq`` order (read-only).
    ``session``: its id, or its key (``agent:main:main``: hooks see the key), which
    ``session_nodes`` maps to the key's current session."""
    def read(conn: sqlite3.Connection) -> list[Any]:
        if not has_table(conn, "transcript_events"):
            return []
        sid = session
        if has_table(conn, "session_nodes"):
            row = conn.execute("SELECT current_session_id FROM session_nodes WHERE session_key = ?", (session,)).fetchone()
            sid = row[0] if row and row[0] else session
        return _read_events(conn, [sid])[sid]
    return read_store(db, read)


def preload(agent: OpenClawAgent, sessions: list[SessionCopies]) -> dict[str, list[Any]]:
    """The live events of several sessions in one read (one connection, one snapshot), by copy unit."""
    sids = [s.session_id for s in sessions if any(c.unit == f"db:{s.session_id}" for c in s.copies)]
    if not sids:
        return {}
    events = read_store(agent.db, lambda conn: _read_events(conn, sids))
    return {f"db:{sid}": evs for sid, evs in events.items()}


def _db_loader(db: Path, sid: str) -> Callable[[], Iterator[Any]]:
    def load() -> Iterator[Any]:
        return iter(read_store(db, lambda conn: _read_events(conn, [sid]))[sid])
    return load


def cold_events(records: Iterator[Any]) -> Iterator[Any]:
    """The transcript events of a cold archive's records (``dist/session-cold-storage-codec-*.mjs``
    ``sessionColdRecordSchema``: a ``header``, then ``event`` records ``{seq, event_json, created_at}`` in
    ``seq`` order, then ``identity``/``active``/``index``/``fts`` records, which are the database's
    indexes of the same events and carry nothing of their own)."""
    for rec in records:
        if not isinstance(rec, dict) or "_bad" in rec:
            yield rec if isinstance(rec, dict) else {"_bad": "not a cold-archive record"}
        elif rec.get("kind") == "event":
            row = rec.get("row")
            text = row.get("event_json") if isinstance(row, dict) else None
            yield _load_line(text) if isinstance(text, str) else {"_bad": "a cold-archive event without event_json"}
        elif rec.get("kind") not in ("header", "identity", "active", "index", "fts"):
            yield {"_bad": f"not a cold-archive record (kind {str(rec.get('kind'))[:40]!r})"}


def _cold_loader(db: Path, sid: str, path: Path, storage: str) -> Callable[[], Iterator[Any]]:
    def load() -> Iterator[Any]:
        if storage == "file":
            return cold_events(_file_jsonl(path))
        row = read_store(db, lambda c: c.execute(
            "SELECT archive_blob FROM session_transcript_cold_archives WHERE session_id = ?", (sid,)).fetchone())
        return cold_events(_jsonl(_zstd_text(row[0]))) if row and row[0] else iter(())
    return load


def _archive_loader(db: Path, sid: str, gen: str) -> Callable[[], Iterator[Any]]:
    def load() -> Iterator[Any]:
        row = read_store(db, lambda c: c.execute(
            "SELECT encoding, archive_blob FROM session_transcript_archives WHERE session_id = ? AND generation = ?",
            (sid, gen)).fetchone())
        if not row:
            return iter(())
        encoding, blob = row
        return _jsonl(_zstd_text(blob) if encoding == "zstd" else bytes(blob).decode("utf-8", "replace"))
    return load


def _file_copies(agent: OpenClawAgent, db_named: set[str]) -> list[tuple[str, Copy]]:
    out: list[tuple[str, Copy]] = []
    cold = agent.sessions / "cold"
    if cold.is_dir():  # archives on disk the database does not name (the database is gone or older)
        for p in sorted(cold.glob("*.jsonl.zst")):
            if p.name not in db_named:
                out.append((f"?cold:{p.name}", Copy(f"coldfile:{p.name}", _file_key(p), 3, p,
                                                    lambda p=p: cold_events(_file_jsonl(p)))))
    for folder, unit, primary_order in ((agent.root / IMPORT_ARCHIVE, "import", 2), (agent.sessions, "legacy", 1)):
        if not folder.is_dir():
            continue
        for p in sorted(folder.iterdir()):
            kind = transcript_kind(p.name) if p.is_file() else None
            if kind is not None:
                out.append((_header_id(p), Copy(f"{unit}:{p.name}", _file_key(p), primary_order if kind == "primary"
                                                else 0, p, lambda p=p: _file_jsonl(p))))
    return out


def list_sessions(agent: OpenClawAgent) -> list[SessionCopies]:
    """Every session of the agent with its copies, oldest copy first."""
    pairs: list[tuple[str, Copy]] = []
    db_named: set[str] = set()
    if agent.db.is_file():
        def read(conn: sqlite3.Connection) -> list[tuple[str, Copy]]:
            rows = _db_copies(agent, conn)
            if has_table(conn, "session_transcript_cold_archives"):
                db_named.update(r[0] for r in conn.execute("SELECT archive_name FROM session_transcript_cold_archives"))
            return rows
        pairs.extend(read_store(agent.db, read))
    pairs.extend(_file_copies(agent, db_named))
    by_id: dict[str, SessionCopies] = {}
    for sid, copy in pairs:
        if sid.startswith("?cold:"):  # an unnamed cold file: its session id is in its events
            sid = _first_session_id(copy) or sid[1:]
        by_id.setdefault(sid, SessionCopies(sid)).copies.append(copy)
    for s in by_id.values():
        s.copies.sort(key=lambda c: (c.order, c.unit))
    return [by_id[k] for k in sorted(by_id)]


def _first_session_id(copy: Copy) -> str:
    for obj in copy.load():
        if isinstance(obj, dict) and obj.get("type") == "session" and isinstance(obj.get("id"), str):
            return obj["id"]
        break
    return ""


def _event_key(obj: Any) -> str:
    if isinstance(obj, dict):
        if obj.get("type") == "session":
            return "session-header"
        if isinstance(obj.get("id"), str) and obj["id"]:
            return "id:" + obj["id"]
    raw = json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str)
    return "sha:" + hashlib.sha1(raw.encode("utf-8", "surrogatepass")).hexdigest()


def merged_events(session: SessionCopies, parsed: Parsed,
                  preloaded: dict[str, list[Any]] | None = None) -> list[tuple[int, Any]]:
    """The session's events, each once, numbered in order (oldest copy first)."""
    seen: set[str] = set()
    out: list[tuple[int, Any]] = []
    for copy in session.copies:
        try:
            loaded = (preloaded or {}).get(copy.unit)
            for obj in (loaded if loaded is not None else copy.load()):
                if isinstance(obj, dict) and "_bad" in obj:
                    parsed.bad(copy.origin, len(out) + 1, f"{copy.unit}: not a JSON event; skipped")
                    continue
                key = _event_key(obj)
                if key in seen:
                    continue
                seen.add(key)
                out.append((len(out) + 1, obj))
        except Exception as exc:  # noqa: BLE001 - one copy that cannot be read is reported; the others still count
            parsed.bad(copy.origin, 0, f"cannot read {copy.unit}: {type(exc).__name__}: {exc}")
    return out


def session_episodes(agent: OpenClawAgent, session: SessionCopies, parsed: Parsed,
                     preloaded: dict[str, list[Any]] | None = None) -> Iterator[Episode]:
    events = merged_events(session, parsed, preloaded)
    scan = TreeScan()
    for _, obj in events:
        scan.add(obj)
    origin = next((c.origin for c in reversed(session.copies)), agent.db)  # the newest copy names the episode
    yield from episodes_from_entries(origin, parsed, SpanCollector(), iter(events), keep=scan.active(),
                                     agent=storable(agent.agent_id), session_id=session.session_id)
