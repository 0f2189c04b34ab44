"""A gated call as one memory: what was asked, who decided it and when, what ran and how it ended.

Written when the call's request is decided (``remember``: approved, rejected,
answered, expired, withdrawn) and rewritten under the same id when the agent's
post-tool hook reports what ran (``record_outcome``): ``inbox:<request id>``,
source ``inbox``. Its first lines say it in English and in Chinese, with the
local time and zone, so "did the restart finish", "approved" and "重启完了没"
find it ("the supervisor approved `openclaw gateway restart` at 20:08 …; it ran
and finished: exit 0 …" / "监督者于 … 批准了 …（重启）；已执行完成 …").

The outcome is kept beside the request (``inbox/<id>.outcome.json``, and an
``inbox.outcome`` ledger event); ``inbox/links/<session>.<call>`` names the
request of a decided call, so a post-tool hook that knows only its session and
call id finds it (core/inbox/call_links.py). The decision's signature is checked against the supervisor
key as of when it was made (a signed decision expires; the memory of it does not).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from core.inbox.call_links import link, linked
from core.inbox.call_words import headline
from core.events import INBOX_OUTCOME_EVENT
from core.infra.fsutil import atomic_write, private_dir
from core.inbox.models import InboxRequest
from core.inbox.store import ID_RE, Inbox, UnknownRequest
from core.ledger.ledger import Event, Ledger, content_id
from core.models import Episode

MAX_OUTPUT = 1500  # characters of output kept (its first lines)
OUTPUT_LINES = 20


def episode_id(request_id: str) -> str:
    return f"inbox:{request_id}"


# -- the outcome ----------------------------------------------------------------------------
def outcome_path(inbox: Inbox, request_id: str) -> Path:
    return inbox.dir / f"{request_id}.outcome.json"


def read_outcome(inbox: Inbox, request_id: str) -> dict | None:
    try:
        data = json.loads(outcome_path(inbox, request_id).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def head(output: str) -> str:
    lines = str(output or "").strip().splitlines()[:OUTPUT_LINES]
    text = "\n".join(lines)
    return text if len(text) <= MAX_OUTPUT else text[: MAX_OUTPUT - 1] + "…"


def outcome_of(status: Any, output: str, by: str) -> dict:
    """``status``: an exit code (0: it ran and finished), or a word: ok, error, interrupted, not run."""
    exit_code = status if isinstance(status, int) and not isinstance(status, bool) else None
    word = str(status).strip().lower() if exit_code is None and status is not None else ""
    if exit_code is not None:
        ran, ok = True, exit_code == 0
    elif word in ("not run", "not-run", "skipped", "blocked", "denied", "cancelled"):
        ran, ok = False, False
    else:
        ran, ok = True, word in ("ok", "success", "succeeded", "done", "ran", "")
    from core.govern.redact import redact_text

    return {"ran": ran, "ok": ok, "exit": exit_code, "status": word or (f"exit {exit_code}" if exit_code is not None
                                                                         else "ok"),
            "output": redact_text(head(output)), "by": str(by)[:200],
            "at": datetime.now(timezone.utc).isoformat()}


def save_outcome(inbox: Inbox, request_id: str, outcome: dict) -> None:
    Ledger(inbox.state_dir).append([Event(content_id("inbox.outcome", request_id, outcome["at"]),
                                          INBOX_OUTCOME_EVENT, {"request_id": request_id, **outcome},
                                          ts=outcome["at"])])
    private_dir(inbox.dir)
    atomic_write(outcome_path(inbox, request_id), json.dumps(outcome, ensure_ascii=False))


# -- the episode ----------------------------------------------------------------------------
def local(dt: datetime) -> str:
    """``2026-12-05 20:08 CST (UTC+08:00)``: the time where the supervisor is."""
    t = dt.astimezone()
    off = t.strftime("%z")
    zone = f"UTC{off[:3]}:{off[3:]}" if off else "UTC"
    name = t.tzname() or ""
    return f"{t:%Y-%m-%d %H:%M} {name} ({zone})" if name and name not in zone else f"{t:%Y-%m-%d %H:%M} ({zone})"


def verification(req: InboxRequest, pin: str | None) -> str:
    d = req.decision
    if d is None or d.ended:
        return ""
    if not d.is_signed:
        return "unsigned (no supervisor key was set up)"
    if not pin:
        return "signed, not checked (no supervisor key to check it with)"
    from core.inbox.signing import short, verify_decision

    payload, why = verify_decision(d.model_dump(mode="json"), pin=pin, request_id=req.id,
                                   input_hash=req.exact_hash(), shown_hash=req.shown_hash(), now=d.decided_at)
    return f"signature verified with the supervisor key {short(pin)}" if payload else f"signature NOT valid: {why}"


def build(req: InboxRequest, outcome: dict | None, verified: str) -> Episode:
    agent, _, session = req.source.partition(":")
    command = req.detail or req.summary
    en, zh = headline(req, outcome, local)
    d = req.decision
    lines = [en, zh, "",
             f"Request {req.id} from {agent} session {session or '-'} ({req.meta.get('tool_name') or req.kind}, "
             f"risk {req.risk}), asked at {local(req.created_at)}: {req.summary}",
             "Exact call:", _clip(command, 2000)]
    if d is not None:
        who = f" by {d.decided_by}" if d.decided_by else ""
        lines.append(f"Decision: {req.status}{who} at {local(d.decided_at)}"
                     + (f"; {verified}" if verified else "") + (f"; note: {d.note}" if d.note else ""))
    if outcome:
        ran = ("ran and finished" if outcome.get("ok") else "ran and failed") if outcome.get("ran") else "did not run"
        code = f", exit {outcome['exit']}" if outcome.get("exit") is not None else ""
        at = _dt(outcome.get("at"))
        lines.append(f"Result: {ran}{code} ({outcome.get('status')}), reported"
                     + (f" at {local(at)}" if at else "") + (f" by {outcome['by']}" if outcome.get("by") else ""))
        if outcome.get("output"):
            lines += ["Its output (first lines):", str(outcome["output"])]
    last = _dt(outcome.get("at")) if outcome else None
    ep = Episode(id=episode_id(req.id), source="inbox", session_id=session, agent=agent, channel="inbox",
                 summary=en, text="\n".join(lines), first_ts=req.created_at,
                 last_ts=last or (d.decided_at if d else req.created_at), message_count=len(lines),
                 meta={"request_id": req.id, "status": req.status, "tool_name": req.meta.get("tool_name"),
                       "verified": verified.startswith("signature verified"),
                       "outcome": (outcome or {}).get("status"), "exit": (outcome or {}).get("exit")})
    from core.enrich.extract import enrich_deterministic

    return enrich_deterministic(ep, keep_given=True)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _dt(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value)) if value else None
    except ValueError:
        return None


def request_for(inbox: Inbox, request: Any) -> InboxRequest | None:
    """The request ``request`` names: its id, or ``(session, call_id)`` of a decided call."""
    if isinstance(request, (tuple, list)) and len(request) == 2:
        request = linked(inbox.state_dir, str(request[0]), str(request[1]))
        if request is None:
            return None
    if not isinstance(request, str) or not ID_RE.match(request):
        return None
    try:
        return inbox.get(request)
    except (UnknownRequest, FileNotFoundError):
        return None


def pin_of(state_dir: Path, pin: str | None) -> str | None:
    if pin:
        return pin
    from core.inbox.signing import public_fingerprint

    return public_fingerprint(state_dir)


# -- what the facade runs (core/capture/facade.py) ------------------------------------------------
def remember(memory, inbox: Inbox, request: Any, *, session: str | None = None, call_id: str | None = None,
             pin: str | None = None, wait: float = 2.0) -> str | None:
    """Write (or rewrite) the episode of a decided request; with ``session`` and ``call_id``,
    link that call to it for the outcome. None when there is no such agent request, or it is
    not decided yet (a request left to the agent's own prompt: linked only)."""
    req = request_for(inbox, request)
    if req is None:
        return None
    if session is not None and call_id:
        link(inbox.state_dir, session, call_id, req.id)
    if req.decision is None:
        return None
    return _store(memory, inbox, req, pin, wait)


def record_outcome(memory, inbox: Inbox, request: Any, status: Any, output: str = "", *, by: str = "",
                   pin: str | None = None, wait: float = 2.0) -> str | None:
    """Keep what ran and how it ended, and rewrite the call's episode with it; None when
    ``request`` (an id, or ``(session, call_id)``) names no request."""
    req = request_for(inbox, request)
    if req is None:
        return None
    save_outcome(inbox, req.id, outcome_of(status, output, by))
    return _store(memory, inbox, req, pin, wait)


def _store(memory, inbox: Inbox, req: InboxRequest, pin: str | None, wait: float) -> str:
    from core.capture.write import writer

    with writer(memory, wait):  # the last of two writers (decision, outcome) has read both
        req = inbox.get(req.id)
        ep = build(req, read_outcome(inbox, req.id), verification(req, pin_of(inbox.state_dir, pin)))
        from core.capture.write import store_changed

        store_changed(memory, [ep], wait)  # the same memory written again adds nothing
    return ep.id
