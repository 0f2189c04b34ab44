"""One decision from the approvals page, checked in this order:

1. a supervisor key was pinned at start (else nothing can be decided here);
2. the request is still pending (else: who decided what and when, and its card);
3. it still shows what the page showed (the hash of its detail): a request that
   changed under the person's eyes is not signed;
4. the verdict is one it takes, with the reason or answer it needs;
5. the key: for an approval always unlocked now with the passphrase typed into
   the page; for a rejection or an answer, the key this page kept, else the same;
   wrong passphrases back off this page only (unlock.py); and it is the pinned key.
   The passphrase arrives in the parsed form as a str (aiohttp's); it is turned
   into a bytearray and dropped at once, the bytearray wiped after the unlock, and
   the process is non-dumpable (ars serve calls no_dumps at start);
6. ``ARS.inbox_decide`` with that signer: the same signed record as the terminal;
   a second decision (another process won the race) is refused with who won.
"""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

from tui.web.responses import answer
from tui.web.unlock import Session

MAX_PASSPHRASE = 4096
TYPED_EVERY_TIME = ("approve", "edit")  # verdicts that let a call or an action run: the passphrase each time
LOOP_ANSWER_AFTER = 2.0  # seconds: then a decision already on disk is answered while its loop runs on


async def decide_one(page, request: web.Request, s: Session, form: dict) -> web.Response:
    from core.api import BadInput
    from core.api import AlreadyDecided

    if page.pin is None:
        return answer(request, 409, page.notice())
    rid = str(form.get("id") or "")
    verdict = str(form.get("verdict") or "")
    note = str(form.get("note") or "").strip()
    try:
        r = await page.read(lambda a: a.inbox_get(rid))
    except BadInput as exc:
        return answer(request, 404, str(exc))
    if r.status != "pending":
        from tui.web.cards import decided_line

        return answer(request, 409, f"{rid} was already {decided_line(r)}: nothing was decided",
                      html=page.card(r, s), status_now=r.status)
    if str(form.get("shown") or "") != r.shown_hash():
        return answer(request, 409, f"{rid} changed since this page showed it: read it again (reloaded) "
                                    "before deciding", html=page.card(r, s), status_now=r.status)
    allowed = page.verdicts(r)
    if verdict not in allowed or verdict == "edit":
        takes = " or ".join(v for v in allowed if v != "edit")
        return answer(request, 400, f"{rid} cannot be {verdict or 'decided without a verdict'}: it takes {takes}")
    if verdict in ("reject", "respond") and not note:
        what = "a reason (the agent is told)" if verdict == "reject" else "your answer"
        return answer(request, 400, f"to {verdict} {rid}, write {what} in its text box first")
    signer, problem = await _signer(page, request, s, form)
    if problem is not None:
        return problem
    # r is what the page showed (its shown hash checked above): signed as it is, never re-read after the unlock
    task = asyncio.ensure_future(page.decide_call(lambda a: a.inbox_decide(rid, verdict, note, signer=signer,
                                                                           shown=r)))
    try:
        done, resuming = await _recorded(page, task, rid)
    except AlreadyDecided as exc:
        latest = await page.read(lambda a: a.inbox_get(rid))
        return answer(request, 409, f"{exc}", html=page.card(latest, s), status_now=latest.status)
    except BadInput as exc:
        return answer(request, 400, str(exc))
    finally:
        page.changed()
    from core.api import short

    line = f"{done.status}: signed with key {short(signer.fingerprint)}"
    if resuming:
        line += "; the loop is resuming in ars serve"
    try:  # the decided card shows its audit record, as the other views do
        shown_card = await page.read(lambda a: a.inbox_audit(rid))
    except Exception:  # noqa: BLE001 - the decision stands; its one-line card says so
        shown_card = done
    return answer(request, 200, line, html=page.card(shown_card, s), status_now=done.status,
                  key={"line": page.key_line(s), "left": s.seconds_left()})


async def _recorded(page, task: asyncio.Future, rid: str) -> tuple[Any, bool]:
    """(the decided request, whether it is still being acted on). A loop's decision resumes the
    loop in this process (as ``ars inbox approve`` does), which may run for minutes: once the
    decision is on disk the page is answered, and the loop goes on."""
    while True:
        finished, _ = await asyncio.wait({task}, timeout=LOOP_ANSWER_AFTER)
        if finished:
            return task.result(), False
        latest = await page.read(lambda a: a.inbox_get(rid))
        if latest.status != "pending":
            task.add_done_callback(_log_late_failure)  # nobody awaits it any more
            return latest, True


def _log_late_failure(task: asyncio.Future) -> None:
    """A loop that fails after the page was answered: said on the server's stderr (the
    dashboard and `ars loop show` show its state), never an unretrieved exception."""
    if task.cancelled() or task.exception() is None:
        return
    import sys

    sys.stderr.write(f"ars serve: {' '.join(str(task.exception()).split())[:300]}\n")


async def _signer(page, request: web.Request, s: Session, form: dict) -> tuple[Any, web.Response | None]:
    """The pinned key, unlocked for this page or with the passphrase in the form; else the answer to give."""
    from core.api import BadPassphrase, SigningError, unlock, wipe

    passphrase = _take_passphrase(form)
    try:
        keep = str(form.get("keep") or "").lower() in ("1", "true", "on", "yes")
        verdict = str(form.get("verdict") or "")
        if not passphrase:
            signer = s.signer_now()
            if signer is not None and verdict not in TYPED_EVERY_TIME:
                return signer, None
            if signer is not None:
                return None, answer(request, 401, "every approval needs the supervisor passphrase typed, even with "
                                                  "the key unlocked on this page: nothing was decided")
            return None, answer(request, 401, "type the supervisor passphrase first: nothing was decided")
        if len(passphrase) > MAX_PASSPHRASE:
            return None, answer(request, 400, "that passphrase is too long: nothing was decided")
        wait = s.backoff.wait_left()
        if wait > 0:
            return None, answer(request, 429, f"a wrong passphrase was typed on this page just before: try again in "
                                              f"{wait:.0f} s; nothing was decided")
        try:
            async with page.unlocking:  # one key derivation at a time, whatever the pages
                signer = await asyncio.to_thread(unlock, page.state_dir, passphrase)
        except BadPassphrase as exc:
            s.backoff.failed()
            s.lock()
            return None, answer(request, 403, str(exc))
        except SigningError as exc:
            return None, answer(request, 409, str(exc))
    finally:
        wipe(passphrase)
    s.backoff.succeeded()
    if signer.fingerprint != page.pin:
        return None, answer(request, 409, f"the key in the state directory ({signer.fingerprint}) is not the key "
                                          f"ars serve started with ({page.pin}): nothing was signed; restart ars "
                                          "serve if you replaced it yourself")
    s.proven = True
    if keep:
        s.keep(signer, page.lock_after)
    else:
        s.lock()
    return signer, None


def _take_passphrase(form: dict) -> bytearray:
    """The form's passphrase as a bytearray (the caller wipes it); the str is dropped from the form."""
    text = form.pop("passphrase", None)
    if not isinstance(text, str) or not text:
        return bytearray()
    out = bytearray(text, "utf-8", "surrogatepass")
    del text
    return out
