"""Receipts: what each turn was given, recorded in the ledger (``context.injected``).

"Why didn't the agent remember?" is answered from these: per session and turn, the
memories injected with their scores and characters, the latency, the budget, and the
query recall ran (cut, secrets redacted, as everything the ledger holds). Reading them
scans the ledger for the event's type as bytes before parsing a line, so a ledger of
episodes costs a byte search, not a JSON parse a line.
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

from core.context.models import Receipt
from core.events import CONTEXT_INJECTED_EVENT
from core.ledger.ledger import LEDGER, Event, content_id

QUERY_CHARS = 500  # of the query kept in a receipt (explain re-runs it)
_NEEDLE = f'"{CONTEXT_INJECTED_EVENT}"'.encode()


def event_of(receipt: Receipt) -> Event:
    from core.govern.redact import redact_text

    data = receipt.model_dump(mode="json", exclude={"event_id"})
    data["query"] = redact_text(receipt.query[:QUERY_CHARS])
    at = receipt.at or datetime.now(timezone.utc).isoformat()
    data["at"] = at
    # unique per turn: the same session and turn may be asked twice (a retried hook)
    eid = content_id("ctx", receipt.session, receipt.turn, at, os.urandom(6).hex())
    return Event(eid, CONTEXT_INJECTED_EVENT, data, ts=at)


def _entries(state_dir: Path) -> Iterator[tuple[str, dict]]:
    try:
        fh = open(Path(state_dir) / LEDGER, "rb")
    except OSError:
        return
    with fh:
        for raw in fh:
            if _NEEDLE not in raw or not raw.endswith(b"\n"):
                continue
            try:
                d = json.loads(raw)
            except (ValueError, RecursionError):
                continue
            if isinstance(d, dict) and d.get("type") == CONTEXT_INJECTED_EVENT and isinstance(d.get("data"), dict):
                yield str(d.get("event_id") or ""), d["data"]


def read(state_dir: Path, session: str | None = None, limit: int | None = None) -> list[Receipt]:
    """The receipts of ``session`` (every session's with None; "": the turns that named no
    session), oldest first; the last ``limit`` when given. A malformed receipt is skipped."""
    out: list[Receipt] = []
    for eid, data in _entries(state_dir):
        if session is not None and (data.get("session") or "") != session:
            continue
        try:
            out.append(Receipt.model_validate({**data, "event_id": eid}))
        except ValueError:
            continue
    return out[-limit:] if limit else out


def sessions(state_dir: Path) -> list[dict]:
    """One row per session that has receipts: session, agent, turns, injected (turns that
    got memories), last (ISO); the most recent first."""
    rows: dict[str, dict] = {}
    for _eid, data in _entries(state_dir):
        key = str(data.get("session") or "")
        row = rows.setdefault(key, {"session": key, "agent": "", "turns": 0, "injected": 0, "last": ""})
        row["turns"] += 1
        row["injected"] += bool(data.get("memories"))
        row["agent"] = str(data.get("agent") or row["agent"])
        row["last"] = max(row["last"], str(data.get("at") or ""))
    return sorted(rows.values(), key=lambda r: r["last"], reverse=True)
