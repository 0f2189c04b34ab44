"""Taking forgotten text out of files ARS wrote: the ledger lines, JSON
that quotes recall results (checkpoints, loop transitions), and the vectors.

The ledger is patched in place, line for line, keeping every line's length:
an episode line becomes ``{"event_id", "type": "episode.forgotten", "ts",
"data": {"id"}}`` padded with spaces before its newline (JSON allows the
whitespace). Every byte offset stays where it was, so the cursors that point
into the ledger (SQLite's applied offset, sync.json, the embedding consumer,
the push order ``seq`` that the team's pull cursors follow) stay valid, and
the text's own disk blocks are overwritten rather than left behind in the free
space of a rewritten copy (ext4 and other in-place file systems; a
copy-on-write file system or an SSD's remapping may keep old blocks: see the
README). The patch set is computed from the ledger itself, so running it
again after a crash finds only what is left (idempotent).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable, Iterator

from core.infra.sqlite_lib import sqlite3

from core.events import EPISODE_EVENT, FORGOTTEN_EVENT
from core.govern.tombstone import PLACEHOLDER

_UPSERT = f'"type": "{EPISODE_EVENT}"'.encode()
_DATA_ID = b'"data": {"id": '
_HIT_KEY = b'"episode_id"'
_TEXT_KEYS = ("snippet", "text", "summary", "context", "terms")
_dec = json.JSONDecoder()


def _data_id(raw: bytes) -> str | None:
    """The episode id of an ``episode.upsert`` line, without decoding the rest."""
    i = raw.find(_DATA_ID)
    if i < 0:
        return None
    try:
        value, _ = _dec.raw_decode(raw[i + len(_DATA_ID):i + len(_DATA_ID) + 4096].decode("utf-8", "replace"))
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def forgotten_line(raw: bytes, event_id: str, ts: str, ep_id: str, ns: str | None) -> bytes:
    """``raw``'s replacement: the same length, no text."""
    d: dict[str, Any] = {"event_id": event_id, "type": FORGOTTEN_EVENT, "ts": ts, "data": {"id": ep_id}}
    if ns:
        d["ns"] = ns
    body = json.dumps(d, ensure_ascii=False).encode("utf-8")
    if len(body) + 1 > len(raw):
        body = json.dumps({"event_id": event_id, "type": FORGOTTEN_EVENT, "data": {}}).encode()
    if len(body) + 1 > len(raw):  # cannot happen for a line that held an episode; never grow a line
        body = b"{}"
    return body + b" " * (len(raw) - 1 - len(body)) + b"\n"


def ledger_patches(path: Path, ids: set[str], start: int = 0, stop: int | None = None,
                   ) -> Iterator[tuple[int, bytes]]:
    """(offset, replacement) for every ledger line from ``start`` (up to
    ``stop``) that holds a forgotten episode's text: its upsert events, and
    other events quoting it in recall results (loop transitions)."""
    if not ids:
        return
    if len(ids) <= FIND_IDS:
        yield from _found_patches(path, ids, start, stop)
        return
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        return
    with fh:
        fh.seek(start)
        offset = start
        for raw in fh:
            end = offset + len(raw)
            if stop is not None and end > stop:
                break
            if raw.endswith(b"\n") and (new := _patch_of(raw, ids)) is not None:
                yield offset, new
            offset = end


def indexed_patches(path: Path, ids: set[str], offsets: Iterable[int], lines_from: int,
                    applied: int) -> Iterator[tuple[int, bytes]]:
    """``ledger_patches`` through memory.sqlite's ``ledger_lines``: the lines
    it names (each read and checked: one already patched yields nothing), and a
    scan of the ranges it does not cover: before ``lines_from`` and from
    ``applied`` (what SQLite has not applied yet) to the end."""
    if not ids:
        return
    if lines_from > 0:
        yield from ledger_patches(path, ids, 0, lines_from)
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        return
    with fh:
        fd = fh.fileno()
        for at in offsets:
            if at < lines_from or at >= applied or (at > 0 and os.pread(fd, 1, at - 1) != b"\n"):
                continue  # scanned below, or not a line's start (never written so: skipped, not patched)
            raw = _line_at(fd, at)
            if raw is not None and (new := _patch_of(raw, ids)) is not None:
                yield at, new
    yield from ledger_patches(path, ids, max(applied, lines_from))


def _line_at(fd: int, at: int) -> bytes | None:
    """The whole line starting at ``at`` with its newline; None when torn."""
    parts, pos = [], at
    while True:
        chunk = os.pread(fd, 1 << 16, pos)
        if not chunk:
            return None
        nl = chunk.find(b"\n")
        if nl >= 0:
            parts.append(chunk[:nl + 1])
            return b"".join(parts)
        parts.append(chunk)
        pos += len(chunk)


# Up to this many ids, the ledger is searched for each id's quoted form (a
# bytes search: ~0.1 s for a 176 MB ledger each); more, and one pass over its
# lines decodes each line's id instead (a 500-episode session: ~1 s).
FIND_IDS = 16


def _found_patches(path: Path, ids: set[str], start: int, stop: int | None) -> Iterator[tuple[int, bytes]]:
    import mmap

    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        return
    with fh:
        if os.fstat(fh.fileno()).st_size == 0:
            return
        mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            end_at = len(mm) if stop is None else min(stop, len(mm))
            lines: dict[int, int] = {}  # line start -> line end (inclusive of its newline)
            needles = [json.dumps(i, ensure_ascii=False).encode("utf-8") for i in ids]
            for needle in needles:
                at = mm.find(needle, start, end_at)
                while at >= 0:
                    ls = mm.rfind(b"\n", start, at) + 1 if at > start else start
                    ls = max(ls, start)
                    le = mm.find(b"\n", at, end_at)
                    if le < 0:
                        break  # a torn last line: never acknowledged
                    lines[ls] = le + 1
                    at = mm.find(needle, le + 1, end_at)
            for ls in sorted(lines):
                new = _patch_of(mm[ls:lines[ls]], ids)
                if new is not None:
                    yield ls, new
        finally:
            mm.close()


def _patch_of(raw: bytes, ids: set[str]) -> bytes | None:
    """A whole ledger line's replacement when it holds a forgotten episode's text
    (its upsert, or an event quoting it); None when it holds none."""
    if _UPSERT in raw:
        eid = _data_id(raw)
        return _scrub_upsert(raw, eid) if eid in ids else None
    if _HIT_KEY in raw:
        return _scrub_event(raw, ids)
    return None


def _scrub_upsert(raw: bytes, ep_id: str) -> bytes:
    try:
        d = json.loads(raw)
        return forgotten_line(raw, d.get("event_id", ""), d.get("ts", ""), ep_id, d.get("ns"))
    except ValueError:  # torn by a crash mid-patch (power loss): nothing of it is kept
        return forgotten_line(raw, "", "", ep_id, None)


def _scrub_event(raw: bytes, ids: set[str]) -> bytes | None:
    try:
        d = json.loads(raw)
    except ValueError:
        return None
    if not scrub_json(d, ids):
        return None
    body = json.dumps(d, ensure_ascii=False).encode("utf-8")
    if len(body) + 1 > len(raw):
        return None  # never reached: scrubbing only shortens strings
    return body + b" " * (len(raw) - 1 - len(body)) + b"\n"


def scrub_json(value: Any, ids: set[str]) -> bool:
    """Replace, in place, the text of every recall hit or episode in ``value``
    whose id is forgotten; True when anything changed."""
    changed = False
    if isinstance(value, dict):
        ref = value.get("episode_id")
        if not isinstance(ref, str):
            ref = value.get("id") if "text" in value and isinstance(value.get("id"), str) else None
        if ref in ids:
            for key in _TEXT_KEYS:
                v = value.get(key)
                if isinstance(v, str) and v and v != PLACEHOLDER:
                    value[key] = PLACEHOLDER if len(v) > len(PLACEHOLDER) else ""
                    changed = True
            for key in ("matched_tokens", "topics", "entities", "relations"):
                if value.get(key):
                    value[key] = []
                    changed = True
        for v in value.values():
            changed = scrub_json(v, ids) or changed
    elif isinstance(value, list):
        for v in value:
            changed = scrub_json(v, ids) or changed
    return changed


def quoted_ids(value: Any) -> set[str]:
    """The ids of the episodes whose text ``value`` quotes: what ``scrub_json`` would scrub
    for them (recall hits in a loop transition), for the ledger line index."""
    out: set[str] = set()
    if isinstance(value, dict):
        ref = value.get("episode_id")
        if not isinstance(ref, str):
            ref = value.get("id") if "text" in value and isinstance(value.get("id"), str) else None
        if ref:
            out.add(ref)
        for v in value.values():
            if isinstance(v, (dict, list)):
                out |= quoted_ids(v)
    elif isinstance(value, list):
        for v in value:
            if isinstance(v, (dict, list)):
                out |= quoted_ids(v)
    return out


def scrub_json_file_lines(lines: Iterable[str], ids: set[str]) -> tuple[list[str], int]:
    """A JSON-lines file's lines with forgotten hits scrubbed, and how many changed."""
    out, n = [], 0
    for line in lines:
        stripped = line.strip()
        if stripped and '"episode_id"' in stripped:
            try:
                d = json.loads(stripped)
            except ValueError:
                out.append(line)
                continue
            if scrub_json(d, ids):
                out.append(json.dumps(d, ensure_ascii=False) + "\n")
                n += 1
                continue
        out.append(line)
    return out, n


def forget_vectors(state: Path, ids: set[str]) -> int:
    """Delete the vectors of ``ids`` from ``vectors.sqlite`` (freed pages
    zeroed) and from the approximate index's files; how many."""
    from core.memory.embed import VECTORS_FILE, ann
    from core.memory.embed.store import VectorStore

    path = state / VECTORS_FILE
    if not path.exists() or not ids:
        return 0
    store = VectorStore(state, create=False)
    try:
        store.max_seq()  # opening it puts the schema in place: the trigger that records each deletion for the index
        conn = sqlite3.connect(path, timeout=10)
        try:
            conn.execute("PRAGMA secure_delete=ON")
            n = 0
            with conn:
                todo = sorted(ids)
                for i in range(0, len(todo), 500):
                    part = todo[i:i + 500]
                    n += conn.execute(f"DELETE FROM vectors WHERE episode_id IN ({','.join('?' * len(part))})",
                                      part).rowcount
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()
        if n:
            ann.scrub(store, state)
        return n
    finally:
        store.close()
