"""The approvals page's handlers: the page, its poll, a decision, locking the key.

ARS is called on two worker threads, each with its own ``ARS`` (the store's
SQLite connections stay on the thread that made them): one reads the inbox for
the page and its polls, one decides (a loop's decision resumes the loop here,
as ``ars inbox approve`` does, which may take a while and must not stall the
page). Every decision goes through ``ARS.inbox_decide`` with a signer from
``core.inbox.signing.unlock``: the same signed record the terminal writes.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

from aiohttp import web

from tui.web import cards
from tui.web.responses import answer
from tui.web.unlock import SESSION_COOKIE, UNLOCK_TTL, Session, Sessions

MAX_POST = 64 * 1024
MAX_KNOWN = 200
FRESH = 1.0  # seconds a listing of the inbox serves every page that polls


class Approvals:
    def __init__(self, state_dir: Path, pin: str | None, lock_after: float = UNLOCK_TTL) -> None:
        self.state_dir = Path(state_dir)
        self.pin = pin  # the supervisor key at start: a key put there later is refused (as in the dashboard)
        self.lock_after = lock_after  # ARS_KEY_LOCK_AFTER: how long a page keeps the key for rejections and answers
        self.sessions = Sessions()
        self.unlocking = asyncio.Semaphore(1)  # one key derivation at a time (~0.3 s, ~96 MiB each)
        self._reader = ThreadPoolExecutor(1, thread_name_prefix="ars-serve-read")
        self._decider = ThreadPoolExecutor(1, thread_name_prefix="ars-serve-decide")
        self._ars: dict[str, Any] = {}
        self._listing: asyncio.Future | None = None
        self._listed_at = 0.0
        self.turns: dict[str, list[str]] = {}  # request id -> the agent's last turns (a loop's last steps)

    # -- ARS on its threads --------------------------------------------------------------------
    def _open(self, which: str):
        ars = self._ars.get(which)
        if ars is None:
            from core.api import ARS
            from core.api import load_settings

            ars = ARS(load_settings(state_dir=self.state_dir), create=False)
            ars.supervisor_pin = self.pin  # loops resumed here act only on the pinned key's decisions
            self._ars[which] = ars
        return ars

    async def read(self, fn: Callable[[Any], Any]) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._reader, lambda: fn(self._open("read")))

    async def decide_call(self, fn: Callable[[Any], Any]) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._decider, lambda: fn(self._open("decide")))

    def close(self) -> None:
        for which, pool in (("read", self._reader), ("decide", self._decider)):
            pool.submit(lambda w=which: self._ars.pop(w).close() if w in self._ars else None)
            pool.shutdown(wait=True)

    # -- sessions -------------------------------------------------------------------------------
    def session_of(self, request: web.Request) -> Session | None:
        return self.sessions.get(request.cookies.get(SESSION_COOKIE))

    def session_or_new(self, request: web.Request) -> tuple[Session | None, bool, web.Response | None]:
        """(this page's session, whether it is new, None), or (None, False, a 429) when too many new
        pages were opened in the last minute: pages already open keep working."""
        s = self.session_of(request)
        if s is not None:
            return s, False, None
        wait = self.sessions.wait_for_new()
        if wait > 0:
            return None, False, answer(request, 429, f"too many new pages of ars serve were opened in the last minute "
                                                     f"(another process may be opening them): pages already open "
                                                     f"keep working; try again in {wait:.0f} s")
        return self.sessions.new(), True, None

    @property
    def can_decide(self) -> bool:
        return self.pin is not None

    def notice(self) -> str:
        if self.pin is None:
            return ("No supervisor key was set up when ars serve started, so nothing can be decided here: run "
                    "`ars supervisor init` on your terminal, then restart ars serve.")
        return ""

    def key_line(self, s: Session) -> str:
        from core.api import short

        left = s.seconds_left()
        if left:
            return (f"key {short(self.pin or '')} unlocked on this page for rejections and answers for "
                    f"{left // 60}:{left % 60:02d}")
        return f"key {short(self.pin or '')} locked: type its passphrase to decide"

    def verdicts(self, r) -> tuple[str, ...]:
        return tuple(r.allowed())

    def card(self, r, s: Session) -> str:
        """``r``: a request, or a decided one's audit record (its card shows the whole record)."""
        req = getattr(r, "request", r)
        return cards.card(r, s.csrf, self.verdicts(req), self.can_decide, turns=self.turns.get(req.id, []))

    def _with_turns(self, a, items: list) -> list:
        """``items``, each one's last turns before asking read once (reader thread): what the
        dashboard's Request pane shows, on the card too (tui/web/cards.py)."""
        for r in items:
            if r.id not in self.turns:
                try:
                    state = a.loop_show(r.meta["loop_id"]) if r.source == "loop" and r.meta.get("loop_id") else None
                    self.turns[r.id] = a.inbox_context(r, state, turns=cards.TURNS)
                except Exception:  # noqa: BLE001 - a card without its turns, never a page that fails
                    self.turns[r.id] = []
        if len(self.turns) > 4 * MAX_KNOWN:
            live = {r.id for r in items}
            self.turns = {k: v for k, v in self.turns.items() if k in live}
        return items

    async def pending(self) -> list:
        """The pending requests, most urgent first. Every open page polls every few seconds and
        listing reads every loop's checkpoint: pages share one read at a time, reused for ``FRESH`` s."""
        loop = asyncio.get_running_loop()
        if self._listing is not None and (not self._listing.done() or loop.time() - self._listed_at < FRESH):
            return await asyncio.shield(self._listing)
        self._listed_at = loop.time()
        self._listing = asyncio.ensure_future(self.read(
            lambda a: self._with_turns(a, sorted((r for r in a.inbox_list("pending") if r.status == "pending"),
                                                 key=cards.urgency))))
        return await asyncio.shield(self._listing)

    def changed(self) -> None:
        """A decision was made here: the next listing reads the inbox again."""
        self._listing = None

    # -- GET / ---------------------------------------------------------------------------------
    async def page(self, request: web.Request) -> web.Response:
        s, fresh, refused = self.session_or_new(request)
        if refused is not None:
            return refused
        assert s is not None
        items = await self.pending()
        body = cards.page(cards_html="".join(self.card(r, s) for r in items), count=len(items), csrf=s.csrf,
                          key_line=self.key_line(s), notice=self.notice(), unlocked_seconds=s.seconds_left(),
                          can_decide=self.can_decide, keep_minutes=max(1, round(self.lock_after / 60)))
        resp = web.Response(text=body, content_type="text/html")
        if fresh:
            resp.set_cookie(SESSION_COOKIE, s.id, httponly=True, samesite="Strict", path="/")
        return resp

    # -- GET /api/requests?known=a,b ------------------------------------------------------------
    async def poll(self, request: web.Request) -> web.Response:
        s = self.session_of(request)
        if s is None:
            return web.json_response({"error": "this page's session ended: reload the page"}, status=403)
        known = [k for k in request.query.get("known", "").split(",") if k][:MAX_KNOWN]
        items = await self.pending()
        shown = {r.id for r in items}

        def others(a):
            from core.api import BadInput

            out = []
            for rid in known:
                if rid in shown:
                    continue
                try:
                    out.append(a.inbox_audit(rid))  # a decided card shows its audit record
                except BadInput:
                    out.append(None)  # gone: no such request any more
                except Exception:  # noqa: BLE001 - an unreadable file: leave the card as it is
                    continue
            return out

        rest = await self.read(others)
        payload = {"count": len(items), "key": {"line": self.key_line(s), "left": s.seconds_left()},
                   "cards": [{"id": r.id, "status": r.status, "html": self.card(r, s)} for r in items]}
        payload["cards"] += [{"id": r.request.id, "status": r.request.status, "html": self.card(r, s)}
                             for r in rest if r is not None]
        return web.json_response(payload)

    # -- POST /lock -----------------------------------------------------------------------------
    async def lock(self, request: web.Request) -> web.Response:
        s, form, problem = await self._checked_post(request)
        if problem is not None:
            return problem
        assert s is not None
        s.lock()
        return web.json_response({"ok": True, "key": {"line": self.key_line(s), "left": 0}})

    async def _checked_post(self, request: web.Request):
        """(session, form, None) when the POST carries this page's CSRF token, else (.., .., a 403)."""
        if request.content_length is not None and request.content_length > MAX_POST:
            return None, None, answer(request, 413, "the form is too large")
        try:
            if request.content_type == "application/json":
                form = await request.json()
                if not isinstance(form, dict):
                    raise ValueError
            else:
                form = dict(await request.post())
        except ValueError:
            return None, None, answer(request, 400, "the form cannot be read: reload the page")
        s = self.session_of(request)
        if not Sessions.csrf_ok(s, str(form.get("csrf") or request.headers.get("X-CSRF-Token") or "")):
            return None, None, answer(request, 403, "refused: this form is not from this page (CSRF token missing "
                                                    "or stale): reload the page and decide again")
        return s, form, None

    # -- POST /decide ---------------------------------------------------------------------------
    async def decide(self, request: web.Request) -> web.Response:
        s, form, problem = await self._checked_post(request)
        if problem is not None:
            return problem
        assert s is not None and form is not None
        from tui.web.decide import decide_one

        return await decide_one(self, request, s, form)

