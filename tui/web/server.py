"""The ``ars serve`` web application (aiohttp, as textual-serve uses it): the
approvals page at ``/``, the dashboard at ``/dashboard`` (textual-serve runs
``python -m tui.web.dashboard`` per browser session over ``/ws``), and the
checks every request passes first (access.py): the Host header, the token
(query once, then the cookie), the Origin of a POST or websocket.
"""

from __future__ import annotations

import asyncio
import shlex
import signal
import sys
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlencode

import aiohttp_jinja2
from aiohttp import web
from textual_serve.server import Server

from tui.web import access
from tui.web.approvals import Approvals
from tui.web.responses import answer, one_line_response

HERE = Path(__file__).resolve().parent
MAX_DASHBOARDS = 4  # Textual processes at once (one per browser tab): the machine is small
PAGE_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
            "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")


def dashboard_command(state_dir: Path) -> str:
    return f"{shlex.quote(sys.executable)} -m tui.web.dashboard --state {shlex.quote(str(state_dir))}"


class ServeServer(Server):
    """textual-serve's server with ARS's routes and checks, run on an AppRunner (so
    ``--port 0`` works and the URL printed is the one bound)."""

    def __init__(self, *, state_dir: Path, host: str, port: int, token: str, pin: str | None) -> None:
        super().__init__(dashboard_command(state_dir), host=host, port=port, title="ARS dashboard",
                         templates_path=HERE / "templates")
        self.state_dir = Path(state_dir)
        self.token = token
        self.approvals = Approvals(self.state_dir, pin)
        self.dashboards = 0
        self.sockets: set[web.WebSocketResponse] = set()

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
        for ws in list(self.sockets):
            await ws.close()

    async def handle_asset(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        if name not in ("approvals.js", "approvals.css"):
            raise web.HTTPNotFound()
        return web.FileResponse(HERE / "static" / name)

    @aiohttp_jinja2.template("app_index.html")
    async def handle_index(self, request: web.Request) -> dict[str, Any]:
        """textual-serve's page, its websocket URL on the host the browser used (checked
        by the guard): an SSH forward to another local port still finds it."""
        size = request.query.get("fontsize", "16")
        return {"font_size": int(size) if size.isdigit() and 6 <= int(size) <= 48 else 16,
                "app_websocket_url": f"ws://{request.host}/ws", "config": {"static": {"url": "/static/"}},
                "application": {"name": self.title}}

    async def handle_websocket(self, request: web.Request) -> web.StreamResponse:
        if self.dashboards >= MAX_DASHBOARDS:
            return one_line_response(503, f"{MAX_DASHBOARDS} dashboards are open already: close one first")
        self.dashboards += 1
        try:
            return await super().handle_websocket(request)
        finally:
            self.dashboards -= 1

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
            await runner.cleanup()
            await asyncio.to_thread(self.approvals.close)


def url(host: str, port: int, token: str | None = None, path: str = "/") -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{path}" + (f"?token={token}" if token else "")
