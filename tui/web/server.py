"""The ``ars serve`` web application (aiohttp, as textual-serve uses it): the
approvals page at ``/``, the dashboard at ``/dashboard`` (one
``python -m tui.web.dashboard`` per browser tab over ``/ws``, capped and reaped:
dashboards.py), and the checks every request passes first (access.py): the Host
header, the token (query once, then the cookie), the Origin of a POST or
websocket. The process is non-dumpable from its start: the passphrase typed into
the page is used here.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
import sys
from pathlib import Path
from typing import Callable
from urllib.parse import urlencode

import aiohttp_jinja2
from aiohttp import web
from textual_serve.server import Server

from tui.web import access
from tui.web.approvals import Approvals
from tui.web.dashboards import Dashboards
from tui.web.responses import answer, one_line_response
from tui.web.unlock import SESSION_COOKIE, UNLOCK_TTL

HERE = Path(__file__).resolve().parent
PAGE_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
            "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")


def dashboard_argv(state_dir: Path) -> list[str]:
    """One dashboard process: exec'd as it is (no shell), told whose child it is."""
    return [sys.executable, "-m", "tui.web.dashboard", "--state", str(state_dir), "--parent", str(os.getpid())]


class ServeServer(Server):
    """textual-serve's server with ARS's routes and checks, run on an AppRunner (so
    ``--port 0`` works and the URL printed is the one bound)."""

    def __init__(self, *, state_dir: Path, host: str, port: int, token: str, pin: str | None,
                 lock_after: float = UNLOCK_TTL) -> None:
        argv = dashboard_argv(state_dir)
        super().__init__(shlex.join(argv), host=host, port=port, title="ARS dashboard",
                         templates_path=HERE / "templates")
        self.state_dir = Path(state_dir)
        self.token = token
        self.approvals = Approvals(self.state_dir, pin, lock_after)
        self.dashboards = Dashboards(argv, self.download_manager)

    # -- the application ------------------------------------------------------------------------
    async def _make_app(self) -> web.Application:
        app = web.Application(middlewares=[self.guard], client_max_size=64 * 1024)
        aiohttp_jinja2.setup(app, loader=__import__("jinja2").FileSystemLoader(self.templates_path))
        a = self.approvals
        app.add_routes([
            web.get("/", a.page, name="approvals"),
            web.get("/api/requests", a.poll),
            web.post("/decide", a.decide),
            web.post("/lock", a.lock),
            web.get("/static-ars/{name}", self.handle_asset),
            web.get("/dashboard", self.handle_index, name="index"),
            web.get("/ws", self.handle_websocket, name="websocket"),
            web.get("/download/{key}", self.handle_download, name="download"),
            web.static("/static", self.statics_path, name="static"),
        ])
        app.on_shutdown.append(self.on_shutdown)
        return app

    async def on_shutdown(self, app: web.Application) -> None:
        await self.dashboards.stop_all()

    async def handle_asset(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        if name not in ("approvals.js", "approvals.css"):
            raise web.HTTPNotFound()
        return web.FileResponse(HERE / "static" / name)

    async def handle_index(self, request: web.Request) -> web.StreamResponse:
        """textual-serve's page, its websocket URL on the host the browser used (checked
        by the guard): an SSH forward to another local port still finds it. The page gets
        a session (as the approvals page does): its dashboard is that session's."""
        s, fresh, refused = self.approvals.session_or_new(request)
        if refused is not None:
            return refused
        size = request.query.get("fontsize", "16")
        resp = aiohttp_jinja2.render_template("app_index.html", request, {
            "font_size": int(size) if size.isdigit() and 6 <= int(size) <= 48 else 16,
            "app_websocket_url": f"ws://{request.host}/ws", "config": {"static": {"url": "/static/"}},
            "application": {"name": self.title}})
        if fresh:
            resp.set_cookie(SESSION_COOKIE, s.id, httponly=True, samesite="Strict", path="/")
        return resp

    async def handle_websocket(self, request: web.Request) -> web.StreamResponse:
        s = self.approvals.session_of(request)
        if s is None:
            return one_line_response(403, "this dashboard's page has no session (or it ended): reload /dashboard")
        return await self.dashboards.serve(request, s, self._process_messages)

    # -- every request --------------------------------------------------------------------------
    @web.middleware
    async def guard(self, request: web.Request, handler: Callable) -> web.StreamResponse:
        if not access.host_allowed(request.headers.get("Host"), self.host, self.port):
            return answer(request, 421, f"refused: the Host header {request.headers.get('Host', '')[:80]!r} does "
                                          f"not name this server: open the URL ars serve printed")
        given = request.query.get("token")
        if given is not None:
            if not access.token_ok(given, self.token):
                return answer(request, 401, "refused: that token is not this server's: open the URL ars serve "
                                              "printed (or run ars serve --show-url)")
            # the token moves into a cookie; the address bar and the history keep the URL without it
            rest = {k: v for k, v in request.query.items() if k != "token"}
            target = request.path + (("?" + urlencode(rest)) if rest else "")
            resp = web.Response(status=303, headers={"Location": target})
            resp.set_cookie(access.COOKIE, self.token, httponly=True, samesite="Strict", path="/")
            self._headers(resp, request)
            return resp
        if not access.token_ok(request.cookies.get(access.COOKIE), self.token):
            return answer(request, 401, "refused: no access token: open the URL ars serve printed "
                                          "(or run ars serve --show-url)")
        unsafe = request.method not in ("GET", "HEAD") or request.headers.get("Upgrade", "").lower() == "websocket"
        if unsafe and not access.origin_ok(request.headers.get("Origin"), request.headers.get("Host")):
            return answer(request, 403, "refused: this request comes from another site's page")
        if request.path.startswith("/ws"):
            return await handler(request)
        resp = await handler(request)
        self._headers(resp, request)
        return resp

    def _headers(self, resp: web.StreamResponse, request: web.Request) -> None:
        h = resp.headers
        h.setdefault("Cache-Control", "no-store")
        h.setdefault("Referrer-Policy", "no-referrer")
        h.setdefault("X-Content-Type-Options", "nosniff")
        h.setdefault("X-Frame-Options", "DENY")
        if request.path == "/dashboard":  # textual-serve's page has inline script and style
            h.setdefault("Content-Security-Policy",
                         f"default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
                         f"connect-src 'self' ws://{request.host}; img-src 'self' data:; font-src 'self' data:; "
                         "frame-ancestors 'none'")
        else:
            h.setdefault("Content-Security-Policy", PAGE_CSP)

    # -- running --------------------------------------------------------------------------------
    async def run(self, on_bound: Callable[[int], None]) -> None:
        from core.api import no_dumps

        no_dumps()  # passphrases typed into the page are used here (core/inbox/key_memory.py)
        app = await self._make_app()
        runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port)
        await site.start()
        sockets = getattr(site._server, "sockets", None) or []  # the port bound (``--port 0`` picks one)
        if sockets:
            self.port = sockets[0].getsockname()[1]
        on_bound(self.port)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        try:
            await stop.wait()
        finally:
            await self.dashboards.stop_all()  # before the runner: each is quit, then signalled, then waited for
            await runner.cleanup()
            await asyncio.to_thread(self.approvals.close)


def url(host: str, port: int, token: str | None = None, path: str = "/") -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{path}" + (f"?token={token}" if token else "")
