"""The audit record in words: one list of (label, text) lines every view draws.

The dashboard's decided pane, ``ars inbox show``, ``ars inbox list --all``, the
web page's decided card and ``ars export --audit`` (markdown) all print these
lines, so they cannot tell one request two ways. Times are the supervisor's
local time with the zone (core/infra/local_time.py).
"""

from __future__ import annotations

from core.inbox.audit import AuditRecord  # noqa: F401 - re-exported by the facade
from core.inbox.models import PAST
from core.infra.local_time import local_time as local

KIND_WORDS = {"approval": "approval", "question": "question", "blocker": "blocker", "agent call": "agent call"}


def one_line(text: str) -> str:
    return " ".join(str(text).split())


def kind_words(rec: AuditRecord) -> str:
    words = KIND_WORDS.get(rec.kind, rec.kind)
    return f"{words} ({rec.tool})" if rec.tool else words


def decided_words(rec: AuditRecord) -> str:
    r = rec.request
    d = r.decision
    if d is None:
        if r.status == "expired" and r.expires_at is not None:
            return f"nobody: its agent stopped waiting at {local(r.expires_at)}"
        if r.expires_at is not None:
            return f"not yet: its agent waits until {local(r.expires_at)}"
        return "not yet"
    if d.ended:
        why = f" ({one_line(d.note)})" if d.note else ""
        return f"nobody: {PAST[d.verdict]} at {local(d.decided_at)}{why}"
    return f"{PAST[d.verdict]} at {local(d.decided_at)} by {d.decided_by or 'someone unknown'}"


def audit_lines(rec: AuditRecord) -> list[tuple[str, str]]:
    """The record, label by label; a line is left out only when it has nothing to say."""
    r = rec.request
    d = r.decision
    out = [("request", r.id), ("kind", kind_words(rec)), ("from", r.source), ("risk", r.risk),
           ("asked", local(r.created_at)), ("asks", one_line(r.summary))]
    if r.detail:
        out.append(("runs", r.detail))
    out += [("outcome", rec.outcome), ("decided", decided_words(rec))]
    if rec.signature_line:
        out.append(("signature", rec.signature_line))
    if d is not None and d.note and not d.ended:
        out.append(("note", d.note))
    if rec.next:
        out.append(("next", rec.next + (f" at {local(rec.next_at)}" if rec.next_at else "")))
    if rec.output:
        out.append(("output", rec.output))
    if r.meta.get("history"):
        out.append(("warning", str(r.meta["history"])))
    return out


def audit_text(rec: AuditRecord, indent: str = "") -> str:
    """The record as plain text, one ``label: text`` line each (multi-line text indented)."""
    width = max(len(k) for k, _ in audit_lines(rec))
    rows = []
    for label, text in audit_lines(rec):
        body = str(text).replace("\n", "\n" + indent + " " * (width + 2))
        rows.append(f"{indent}{label + ':':<{width + 1}} {body}")
    return "\n".join(rows)
