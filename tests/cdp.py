"""A headless Chromium driven over the DevTools protocol (CDP) with aiohttp's
websocket client: what tests/tui/web/test_serve.py and bench/serve.py use to load a
page, read it, click in it and time its first paint, the way a person's
browser does (Debian's ``chromium``; nothing is downloaded).

``chromium_path()`` is None when it is not installed; callers fail under
``CI=true`` and skip elsewhere.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import tempfile
import time
from typing import Any

import aiohttp

LISTENING = re.compile(rb"DevTools listening on (ws://\S+)")


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class CDPError(RuntimeError):
    pass


class Browser:
    """One headless Chromium with its own profile; ``async with Browser() as b``."""

    def __init__(self, width: int = 412, height: int = 900) -> None:
        self.width, self.height = width, height
        self.proc: asyncio.subprocess.Process | None = None
        self.profile = tempfile.mkdtemp(prefix="ars-chromium-")
        self.http: aiohttp.ClientSession | None = None
        self.port = 0

    async def __aenter__(self) -> "Browser":
        exe = chromium_path()
        if exe is None:
            raise CDPError("chromium is not installed: apt-get install -y chromium")
        args = [exe, "--headless=new", "--disable-gpu", "--remote-debugging-port=0", "--remote-allow-origins=*",
                f"--user-data-dir={self.profile}", f"--window-size={self.width},{self.height}", "--no-first-run",
                "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
                "--hide-scrollbars", "--mute-audio", "about:blank"]
        if os.geteuid() == 0:
            args.insert(1, "--no-sandbox")  # root (CI, this machine): Chromium's sandbox refuses to start
        self.proc = await asyncio.create_subprocess_exec(*args, stdin=asyncio.subprocess.DEVNULL,
                                                         stdout=asyncio.subprocess.DEVNULL,
                                                         stderr=asyncio.subprocess.PIPE)
        assert self.proc.stderr is not None
        deadline = time.monotonic() + 30
        seen = b""
        while time.monotonic() < deadline:
            line = await asyncio.wait_for(self.proc.stderr.readline(), timeout=max(0.1, deadline - time.monotonic()))
            if not line:
                break
            seen += line
            m = LISTENING.search(line)
            if m:
                self.port = int(m.group(1).split(b":")[2].split(b"/")[0])
                break
        if not self.port:
            await self.close()
            raise CDPError(f"chromium did not start its DevTools endpoint: {seen[-400:]!r}")
        asyncio.get_running_loop().create_task(self._drain())
        self.http = aiohttp.ClientSession()
        return self

    async def _drain(self) -> None:
        try:
            while self.proc and self.proc.stderr and await self.proc.stderr.read(65536):
                pass
        except Exception:  # noqa: BLE001 - the browser went away
            pass

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def close(self) -> None:
        if self.http is not None:
            await self.http.close()
            self.http = None
        if self.proc is not None and self.proc.returncode is None:
            self.proc.terminate()
            try:
                await asyncio.wait_for(self.proc.wait(), 10)
            except asyncio.TimeoutError:
                self.proc.kill()
                await self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    async def new_page(self) -> "Page":
        assert self.http is not None
        async with self.http.put(f"http://127.0.0.1:{self.port}/json/new?about:blank") as resp:
            target = await resp.json(content_type=None)
        page = Page(self.http, target["webSocketDebuggerUrl"])
        await page.open()
        return page


class Page:
    def __init__(self, http: aiohttp.ClientSession, ws_url: str) -> None:
        self.http, self.ws_url = http, ws_url
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.next_id = 0
        self.waiting: dict[int, asyncio.Future] = {}
        self.events: list[tuple[float, str, dict]] = []
        self.event_seen = asyncio.Event()
        self.reader: asyncio.Task | None = None

    async def open(self) -> None:
        self.ws = await self.http.ws_connect(self.ws_url, max_msg_size=0)
        self.reader = asyncio.get_running_loop().create_task(self._read())
        await self.send("Page.enable")
        await self.send("Runtime.enable")

    async def _read(self) -> None:
        assert self.ws is not None
        async for msg in self.ws:
            if msg.type != aiohttp.WSMsgType.TEXT:
                continue
            data = json.loads(msg.data)
            if "id" in data and data["id"] in self.waiting:
                fut = self.waiting.pop(data["id"])
                if not fut.done():
                    fut.set_result(data)
            elif "method" in data:
                self.events.append((time.perf_counter(), data["method"], data.get("params", {})))
                self.event_seen.set()

    async def send(self, method: str, timeout: float = 30.0, **params: Any) -> dict:
        assert self.ws is not None
        self.next_id += 1
        fut = asyncio.get_running_loop().create_future()
        self.waiting[self.next_id] = fut
        await self.ws.send_str(json.dumps({"id": self.next_id, "method": method, "params": params}))
        data = await asyncio.wait_for(fut, timeout)
        if "error" in data:
            raise CDPError(f"{method}: {data['error']}")
        return data.get("result", {})

    async def wait_event(self, name: str, after: float = 0.0, timeout: float = 30.0) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            for t, method, params in self.events:
                if method == name and t >= after:
                    return params
            left = deadline - time.monotonic()
            if left <= 0:
                raise CDPError(f"no {name} within {timeout:.0f} s")
            self.event_seen.clear()
            try:
                await asyncio.wait_for(self.event_seen.wait(), left)
            except asyncio.TimeoutError:
                pass

    async def goto(self, url: str, timeout: float = 30.0) -> None:
        start = time.perf_counter()
        await self.send("Page.navigate", url=url)
        await self.wait_event("Page.loadEventFired", after=start, timeout=timeout)

    async def eval(self, expression: str, timeout: float = 30.0) -> Any:
        res = await self.send("Runtime.evaluate", timeout=timeout, expression=expression, returnByValue=True,
                              awaitPromise=True)
        if "exceptionDetails" in res:
            raise CDPError(f"{expression[:80]}: {res['exceptionDetails'].get('exception', {}).get('description')}")
        return res.get("result", {}).get("value")

    async def wait_for(self, expression: str, timeout: float = 30.0, every: float = 0.02) -> Any:
        """The value of ``expression`` once it is truthy (polled)."""
        deadline = time.monotonic() + timeout
        while True:
            value = await self.eval(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise CDPError(f"still false after {timeout:.0f} s: {expression[:120]}")
            await asyncio.sleep(every)

    async def click(self, selector: str) -> float:
        """A real mouse click in the middle of the element (scrolled into view); the time it was sent."""
        box = await self.eval(f"(() => {{ const el = document.querySelector({json.dumps(selector)}); "
                              "if (!el) return null; el.scrollIntoView({block: 'center'}); "
                              "const r = el.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()")
        if not box:
            raise CDPError(f"nothing matches {selector!r}")
        x, y = box
        await self.send("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
        sent = time.perf_counter()
        await self.send("Input.dispatchMouseEvent", type="mousePressed", x=x, y=y, button="left", clickCount=1)
        await self.send("Input.dispatchMouseEvent", type="mouseReleased", x=x, y=y, button="left", clickCount=1)
        return sent

    async def type(self, selector: str, text: str) -> None:
        """Focus the element and type ``text`` into it (as an input method would insert it)."""
        ok = await self.eval(f"(() => {{ const el = document.querySelector({json.dumps(selector)}); "
                             "if (!el) return false; el.focus(); el.value = ''; return true; })()")
        if not ok:
            raise CDPError(f"nothing matches {selector!r}")
        await self.send("Input.insertText", text=text)

    async def screenshot(self, path: str) -> None:
        import base64

        data = await self.send("Page.captureScreenshot", format="png")
        with open(path, "wb") as fh:
            fh.write(base64.b64decode(data["data"]))

    async def close(self) -> None:
        if self.reader is not None:
            self.reader.cancel()
        if self.ws is not None:
            await self.ws.close()
