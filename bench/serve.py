"""``ars serve`` in a real headless Chromium (Debian's, over CDP: tests/cdp.py):

    .venv/bin/python bench/serve.py [--requests 20] [--loads 5] [--clicks 10] [--dashboards 3]

One state directory with a supervisor key and ``--requests`` pending requests
(half with a deadline), one ``ars serve --port 0`` process, one browser
(412x900, a phone's viewport), measured one after another:

* ``approvals page first paint``: a fresh load of ``/`` (cookie already set),
  the browser's own first-contentful-paint (from navigation start), ``--loads`` times;
* ``dashboard first paint``: ``/dashboard`` from navigation start until the
  app's first screen (a websocket frame holding its header, "Loops") has come
  in; each load is a new Textual process, ``--dashboards`` times;
* ``click approve -> decided``: from the mouse click on Approve until the
  request's decision file exists (what the agent's hook waits for), and until
  the card shows it; the first click types the passphrase (the key is
  unlocked, PKCS#8 decryption), the rest use the key kept unlocked for the page.

Printed as a markdown table with the 1-minute load average (2 shared cores);
never asserted, not part of the tests.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from core.api import ARS  # noqa: E402
from core.config import Settings  # noqa: E402
from core.inbox import Inbox  # noqa: E402

from cdp import Browser, chromium_path  # noqa: E402

PASSPHRASE = "the bench supervisor's passphrase"
URL_LINE = re.compile(r"open (http://\S+/\?token=(\S+))")


def progress(msg: str) -> None:
    print(f"[serve] {msg}", file=sys.stderr, flush=True)


def seed(state: Path, n: int) -> list[str]:
    with ARS(Settings(state_dir=state)) as a:
        a.supervisor_init(PASSPHRASE.encode())
        ids = []
        for i in range(n):
            r = a.request_approval(f"claude-code:s{i % 3}", f"step {i}: run the migration",
                                   f"psql -c 'ALTER TABLE t{i} ADD COLUMN c int'", risk=("high", "medium")[i % 2],
                                   binds="Bash", expires_in=900 if i % 2 == 0 else None)
            ids.append(r.id)
    return ids


def start(state: Path) -> tuple[subprocess.Popen, str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARS_")}
    env["ARS_RECALL_DAEMON"] = "off"
    proc = subprocess.Popen([sys.executable, "-m", "tui.cli.main", "serve", "--state", str(state), "--port", "0"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    m = URL_LINE.search(proc.stdout.readline())
    if m is None:
        proc.kill()
        raise SystemExit("ars serve printed no URL")
    return proc, m.group(1), m.group(1).split("/?token=")[0]


async def page_paints(page, base: str, loads: int) -> list[float]:
    out = []
    for _ in range(loads):
        await page.goto("about:blank")
        await page.goto(base + "/")
        fcp = await page.wait_for("(performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime")
        out.append(float(fcp))
    return out


async def dashboard_paints(browser, base: str, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        page = await browser.new_page()
        await page.send("Network.enable")
        t0 = time.perf_counter()
        await page.send("Page.navigate", url=base + "/dashboard")
        deadline = time.monotonic() + 60
        seen = None
        while seen is None and time.monotonic() < deadline:
            for t, method, params in page.events:
                if method == "Network.webSocketFrameReceived":
                    r = params["response"]
                    data = base64.b64decode(r["payloadData"]).decode("utf-8", "replace") if r.get("opcode") == 2 \
                        else r["payloadData"]
                    if "Loops" in data:
                        seen = t
                        break
            await asyncio.sleep(0.01)
        if seen is not None:
            out.append((seen - t0) * 1000)
        await page.goto("about:blank")  # the websocket closes: its Textual process quits
        await page.close()
        await asyncio.sleep(1.0)
    return out


async def clicks(page, base: str, state: Path, ids: list[str], n: int) -> tuple[list[float], list[float], list[float]]:
    inbox = Inbox(state)
    first, rest, shown = [], [], []
    await page.goto(base + "/")
    for i, rid in enumerate(ids[:n]):
        card = f'article[data-id="{rid}"]'
        if i == 0:
            await page.type("#passphrase", PASSPHRASE)
        path = inbox.decision_path(rid)
        sent = await page.click(f'{card} button[value="approve"]')
        while not path.exists():
            await asyncio.sleep(0.002)
        decided = (time.perf_counter() - sent) * 1000
        await page.wait_for(f"document.querySelector('{card}').dataset.status === 'approved'", every=0.005)
        (first if i == 0 else rest).append(decided)
        shown.append((time.perf_counter() - sent) * 1000)
    return first, rest, shown


def row(name: str, values: list[float]) -> str:
    if not values:
        return f"| {name} | 0 | - | - | - |"
    return (f"| {name} | {len(values)} | {statistics.median(values):.0f} | {max(values):.0f} | "
            f"{os.getloadavg()[0]:.2f} |")


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=20)
    ap.add_argument("--loads", type=int, default=5)
    ap.add_argument("--clicks", type=int, default=10)
    ap.add_argument("--dashboards", type=int, default=3)
    opts = ap.parse_args()
    if chromium_path() is None:
        raise SystemExit("chromium is not installed: apt-get install -y chromium")
    with tempfile.TemporaryDirectory(prefix="ars-bench-serve-") as tmp:
        state = Path(tmp) / "state"
        seed(state, max(opts.requests, opts.clicks))
        proc, url, base = start(state)
        try:
            async with Browser() as browser:
                page = await browser.new_page()
                await page.goto(url)  # the token moves into the cookie
                order = await page.eval("Array.from(document.querySelectorAll('article.card')).map(c => c.dataset.id)")
                progress(f"{len(order)} cards; measuring the page's first paint")
                paints = await page_paints(page, base, opts.loads)
                progress("clicking approve")
                first, rest, shown = await clicks(page, base, state, order, opts.clicks)  # in the page's order
                progress("the dashboard")
                dash = await dashboard_paints(browser, base, opts.dashboards)
        finally:
            proc.terminate()
            proc.wait(15)
    print(f"\nars serve, headless Chromium {chromium_version()}, {opts.requests} pending requests, "
          f"{os.cpu_count()} cores\n")
    print("| measure (ms) | runs | p50 | max | load 1m |")
    print("|---|---|---|---|---|")
    for name, values in (("approvals page first paint (FCP)", paints),
                         ("dashboard first paint (app's first screen)", dash),
                         ("click approve -> decided, typing the passphrase (unlock)", first),
                         ("click approve -> decided, key unlocked for the page", rest),
                         ("click approve -> card shows approved", shown)):
        print(row(name, values))


def chromium_version() -> str:
    try:
        return subprocess.run([chromium_path(), "--version"], capture_output=True, text=True,
                              timeout=30).stdout.split()[1]
    except (OSError, IndexError, subprocess.SubprocessError):
        return "?"


if __name__ == "__main__":
    asyncio.run(main())
