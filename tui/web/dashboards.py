"""``ars serve``'s dashboard processes (one Textual app per browser tab, over ``/ws``):
started without a shell, capped, and always reaped.

textual-serve starts each app with ``create_subprocess_shell`` and stops it by sending
"quit" and waiting for as long as it takes: a ``sh -c`` wrapper that does not pass
SIGTERM on, an app that is busy or hung, or ``ars serve`` itself killed, left
dashboard processes behind (each may hold the unlocked key). Here:

* each app is ``python -m tui.web.dashboard --state DIR --parent PID`` exec'd
  directly, in a process group of its own; it asks the kernel for SIGKILL when
  ``ars serve`` dies, even by SIGKILL (PR_SET_PDEATHSIG), and is non-dumpable;
* at most ``MAX_DASHBOARDS`` run, at most one per page session (a reload of the tab
  replaces its own). When all are taken, a page whose passphrase unlocked the key on
  the approvals page (the supervisor's: unlock.py) takes the slot of the oldest page
  that never did; anyone else is told so in one line;
* one is stopped by "quit", then SIGTERM to its group after ``QUIT_GRACE`` s, then
  SIGKILL after ``TERM_GRACE`` s, and waited for. On SIGTERM or SIGINT ``ars serve``
  stops them all this way before it exits.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from textual_serve.app_service import AppService

from tui.web.responses import one_line_response

MAX_DASHBOARDS = 4  # Textual processes at once (one per browser tab): the machine is small
QUIT_GRACE = 3.0
TERM_GRACE = 3.0
KILL_WAIT = 5.0


class DashboardService(AppService):
    """textual-serve's AppService, with the app exec'd in its own process group and a stop that ends."""

    def __init__(self, argv: list[str], **kw: Any) -> None:
        super().__init__(shlex.join(argv), **kw)
        self.argv = argv

    async def _open_app_process(self, width: int = 80, height: int = 24):
        env = self._build_environment(width=width, height=height)
        self._process = process = await asyncio.create_subprocess_exec(
            *self.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=env, start_new_session=True)
        self._stdin = process.stdin
        return process

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    async def stop(self) -> None:
        task, self._task = self._task, None
        process = self._process
        if task is None:
            return
        try:
            await self._download_manager.cancel_app_downloads(app_service_id=self.app_service_id)
            await self.send_meta({"type": "quit"})
        except Exception:  # noqa: BLE001 - a dead app's pipe: the signals below still stop it
            pass
        for sig, grace in ((None, QUIT_GRACE), (signal.SIGTERM, TERM_GRACE), (signal.SIGKILL, KILL_WAIT)):
            if sig is not None:
                _signal_group(process, sig)
            done, _ = await asyncio.wait({task}, timeout=grace)
            if done:
                break
        if process is not None:
            _signal_group(process, signal.SIGKILL)  # whatever the app started in its group goes with it
            try:
                await asyncio.wait_for(process.wait(), KILL_WAIT)
            except asyncio.TimeoutError:
                pass


def _signal_group(process, sig: int) -> None:
    if process is None or process.returncode is not None:
        return
    try:
        os.killpg(process.pid, sig)  # start_new_session: its group is its pid
    except (ProcessLookupError, PermissionError):
        pass


@dataclass
class Running:
    session: Any  # unlock.Session
    started: float = field(default_factory=time.monotonic)
    websocket: web.WebSocketResponse | None = None
    service: DashboardService | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)


class Dashboards:
    def __init__(self, argv: list[str], download_manager, cap: int = MAX_DASHBOARDS) -> None:
        self.argv = argv
        self.download_manager = download_manager
        self.cap = cap
        self.live: list[Running] = []
        self._admit = asyncio.Lock()

    def pids(self) -> list[int]:
        return [r.service.pid for r in self.live if r.service is not None and r.service.pid is not None]

    async def serve(self, request: web.Request, session, pump) -> web.StreamResponse:
        """The websocket of one dashboard for ``session``; ``pump(websocket, service)`` relays
        its messages (textual-serve's) until the browser goes."""
        async with self._admit:
            own = [r for r in self.live if r.session is session]
            for r in own:  # a reload of the tab: its previous dashboard goes first
                await self._close(r)
            if len(self.live) >= self.cap:
                victim = self._victim_for(session)
                if victim is None:
                    return one_line_response(503, f"{self.cap} dashboards are open already: close one, or type your "
                                                  "passphrase once on the approvals page (/) and reload: a page that "
                                                  "did takes the slot of one that never did")
                await self._close(victim)
            entry = Running(session)
            self.live.append(entry)
        try:
            return await self._run(request, entry, pump)
        finally:
            if entry.service is not None:
                await entry.service.stop()
            if entry in self.live:
                self.live.remove(entry)
            entry.done.set()

    def _victim_for(self, session) -> Running | None:
        if not getattr(session, "proven", False):
            return None
        strangers = [r for r in self.live if not getattr(r.session, "proven", False)]
        return min(strangers, key=lambda r: r.started) if strangers else None

    async def _run(self, request: web.Request, entry: Running, pump) -> web.StreamResponse:
        from textual_serve.server import to_int

        websocket = web.WebSocketResponse(heartbeat=15)
        entry.websocket = websocket
        await websocket.prepare(request)
        entry.service = DashboardService(self.argv, write_bytes=websocket.send_bytes, write_str=websocket.send_str,
                                         close=websocket.close, download_manager=self.download_manager)
        try:
            await entry.service.start(to_int(request.query.get("width", "80"), 80),
                                      to_int(request.query.get("height", "24"), 24))
            await pump(websocket, entry.service)
        except asyncio.CancelledError:
            await websocket.close()
        return websocket

    async def _close(self, entry: Running) -> None:
        """Close ``entry``'s websocket and wait until its process is gone (bounded)."""
        if entry.websocket is not None:
            await entry.websocket.close()
        elif entry.service is not None:
            await entry.service.stop()
        try:
            await asyncio.wait_for(entry.done.wait(), QUIT_GRACE + TERM_GRACE + KILL_WAIT + 2)
        except asyncio.TimeoutError:
            pass

    async def stop_all(self) -> None:
        """Every dashboard stopped and waited for (ars serve is going)."""
        await asyncio.gather(*(self._close(r) for r in list(self.live)), return_exceptions=True)
