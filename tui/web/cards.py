"""The approvals page as HTML: the page, and one card per request (the same
renderer draws the first load and every update the page polls for).

What a card shows is what the dashboard's request pane shows: the source, the
kind, the risk, the summary, exactly what will run (the request's stored
detail, whose secrets were replaced when the request was made), its meta, and
its deadline. Everything is escaped; the page loads no script or style from
anywhere else, and the Content-Security-Policy says so (server.py).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from html import escape

from core.api import local_time

KIND_LABEL = {"approval": "Approval needed", "question": "Question", "blocker": "Blocked"}
DECIDED_LABEL = {"approval": "Approval request", "question": "Question", "blocker": "Blocker"}
VERB = {"approve": "Approve", "reject": "Reject", "respond": "Respond"}
PAST = {"approved": "approved", "rejected": "rejected", "answered": "answered", "expired": "expired",
        "withdrawn": "withdrawn"}
MAX_RUNS = 6000  # characters of "runs" drawn on a phone; the rest is counted
HIDDEN_META = ("allowed", "loop_status", "transcript_path")  # the transcript: its last turns are shown instead


def _ms(dt: datetime | None) -> str:
    return "" if dt is None else str(int(dt.timestamp() * 1000))


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def urgency(r) -> tuple:
    """Most urgent first, as the dashboard sorts (core/inbox/urgency.py): the nearest deadline,
    then the higher risk, then the oldest."""
    from core.api import inbox_urgency

    return inbox_urgency(r)


def decided_line(r) -> str:
    d = r.decision
    if r.status == "expired" and d is None:
        return f"expired: nobody waits for it any more (its deadline passed at {local_time(r.expires_at)})"
    if d is None:
        return r.status
    when = local_time(d.decided_at)
    by = f" by {d.decided_by}" if d.decided_by and not d.ended else ""
    note = f" ({_one_line(d.note, 200)})" if d.note else ""
    return f"{PAST.get(r.status, r.status)} at {when}{by}{note}"


def _meta_rows(r) -> str:
    rows = []
    for k, v in r.meta.items():
        if k in HIDDEN_META or (r.source == "loop" and k in ("args",)):
            continue
        text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
        rows.append(f"<dt>{escape(k)}</dt><dd>{escape(_one_line(text, 200))}</dd>")
    return f"<dl class=\"meta\">{''.join(rows)}</dl>" if rows else ""


def audit_list(rec) -> str:
    """A decided request's audit record (core/inbox/audit_text.py): the lines every view shows."""
    from core.api import audit_lines

    rows = "".join(f"<dt>{escape(label)}</dt><dd class=\"a-{escape(label)}\">{escape(str(text))}</dd>"
                   for label, text in audit_lines(rec))
    return f"<dl class=\"audit sig-{escape(rec.signature or 'none')}\">{rows}</dl>"


TURNS = 4  # the agent's last turns shown on a card (the dashboard shows 6; a phone has less room)


def _turns(r, turns: list[str]) -> str:
    if not turns:
        return ""
    what = "the loop's last steps" if r.source == "loop" else "the agent's last turns"
    items = "".join(f"<li>{escape(_one_line(t, 300))}</li>" for t in turns[-TURNS:])
    return f"<details class=\"turns\" open><summary>before asking ({what})</summary><ol>{items}</ol></details>"


def card(r, csrf: str, verdicts: tuple[str, ...], can_decide: bool, turns: list[str] | None = None) -> str:
    """One request as an ``<article>``: pending with its decision form, or decided with its audit
    record (``r`` an ``AuditRecord``; a bare request says who decided in one line)."""
    rec = r if hasattr(r, "request") else None
    r = rec.request if rec is not None else r
    pending = r.status == "pending"
    risk = escape(r.risk)
    label = KIND_LABEL.get(r.kind, escape(r.kind)) if pending else \
        f"{DECIDED_LABEL.get(r.kind, escape(r.kind))}: {escape(PAST.get(r.status, r.status))}"
    head = (f"<div class=\"head\"><span class=\"kind kind-{escape(r.kind)}\">{label}"
            f"</span><span class=\"risk risk-{risk}\">risk {risk}</span>"
            f"<span class=\"source\">{escape(r.source)}</span>"
            + (f"<span class=\"countdown\" data-deadline=\"{_ms(r.expires_at)}\"></span>" if r.expires_at and pending
               else "") + "</div>")
    if rec is not None and not pending:  # one line of what became of it, then its whole record
        parts = [head, f"<p class=\"decided\">{escape(decided_line(r))}</p>", audit_list(rec)]
        status = escape(r.status)
        return (f"<article class=\"card risk-{risk} status-{status}\" id=\"card-{escape(r.id)}\" "
                f"data-id=\"{escape(r.id)}\" data-status=\"{status}\">{''.join(parts)}</article>")
    parts = [head, f"<p class=\"summary\">{escape(r.summary)}</p>"]
    if r.detail:
        shown = r.detail[:MAX_RUNS]
        more = len(r.detail) - len(shown)
        parts.append(f"<div class=\"runs-label\">{'runs' if r.kind == 'approval' else 'about'}</div>"
                     f"<pre class=\"runs\">{escape(shown)}</pre>"
                     + (f"<p class=\"more\">… and {more:,} more characters (ars inbox show {escape(r.id)})</p>"
                        if more > 0 else ""))
    parts.append(_meta_rows(r))
    parts.append(_turns(r, turns or []))
    parts.append(f"<p class=\"ids\">{escape(r.id)} · asked <time data-at=\"{_ms(r.created_at)}\">"
                 f"{escape(local_time(r.created_at))}</time></p>")
    if pending:
        parts.append(_form(r, csrf, verdicts, can_decide))
    else:
        parts.append(f"<p class=\"decided\">{escape(decided_line(r))}</p>")
    status = escape(r.status)
    return (f"<article class=\"card risk-{risk} status-{status}\" id=\"card-{escape(r.id)}\" "
            f"data-id=\"{escape(r.id)}\" data-status=\"{status}\">{''.join(parts)}</article>")


def _form(r, csrf: str, verdicts: tuple[str, ...], can_decide: bool) -> str:
    buttons = "".join(f"<button type=\"submit\" name=\"verdict\" value=\"{v}\" class=\"v-{v}\""
                      f"{'' if can_decide else ' disabled'}>{VERB[v]}</button>" for v in verdicts if v in VERB)
    hint = {"approve": "note (optional)", "reject": "reason (to reject)", "respond": "your answer (to respond)"}
    placeholder = " · ".join(hint[v] for v in verdicts if v in hint)
    extra = ("<p class=\"hint\">edit the arguments with <code>ars loop edit</code> or in the dashboard</p>"
             if "edit" in verdicts else "")
    return (f"<form class=\"decide\" method=\"post\" action=\"/decide\">"
            f"<input type=\"hidden\" name=\"csrf\" value=\"{escape(csrf)}\">"
            f"<input type=\"hidden\" name=\"id\" value=\"{escape(r.id)}\">"
            f"<input type=\"hidden\" name=\"shown\" value=\"{escape(r.shown_hash())}\">"
            f"<input type=\"text\" name=\"note\" maxlength=\"4000\" placeholder=\"{escape(placeholder)}\" "
            f"autocomplete=\"off\">"
            f"<div class=\"buttons\">{buttons}</div>{extra}<p class=\"result\" role=\"status\"></p></form>")


def page(*, cards_html: str, count: int, csrf: str, key_line: str, notice: str, unlocked_seconds: int,
         can_decide: bool, keep_minutes: int = 5) -> str:
    """The whole page; the passphrase box is the page's one (it unlocks for whichever card is decided)."""
    now_ms = int(datetime.now(timezone.utc).timestamp() * 1000)
    unlock = ("" if not can_decide else
              "<section class=\"unlock\" id=\"unlock\">"
              f"<p id=\"keystate\" data-left=\"{unlocked_seconds}\">{escape(key_line)}</p>"
              "<label>supervisor passphrase <input type=\"password\" id=\"passphrase\" name=\"passphrase\" "
              "autocomplete=\"off\" spellcheck=\"false\"></label>"
              "<label class=\"keep\"><input type=\"checkbox\" id=\"keep\" checked> keep the key unlocked on this "
              f"page for rejections and answers for {keep_minutes} minutes (every approval asks again)</label>"
              f"<button type=\"button\" id=\"lock\"{'' if unlocked_seconds else ' hidden'}>lock now</button>"
              "</section>")
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<meta name=\"csrf\" content=\"{escape(csrf)}\"><meta name=\"server-now\" content=\"{now_ms}\">"
            "<title>ARS inbox</title><link rel=\"stylesheet\" href=\"/static-ars/approvals.css\">"
            "<script src=\"/static-ars/approvals.js\" defer></script></head><body>"
            "<header><h1>ARS inbox</h1>"
            f"<span id=\"count\">{count} waiting</span><a href=\"/dashboard\">dashboard</a></header>"
            + (f"<p class=\"notice\">{escape(notice)}</p>" if notice else "")
            + unlock
            + f"<main id=\"cards\">{cards_html}</main>"
            f"<p id=\"empty\"{' hidden' if count else ''}>Nothing is waiting for you.</p>"
            "</body></html>")
