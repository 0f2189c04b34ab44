"""Dashboard benchmarks: first paint, keypress latency, refresh latency, memory.

    .venv/bin/python bench/dashboard.py [--loops 1000] [--entries 100] [--keep DIR]

1. The demo state (``ars demo``'s seeding): time from process start to the
   first paint that shows the loops, in a real terminal (tmux, 160x48), and
   in-process (app created -> first frame; -> loops table filled).
2. A large state: ``--loops`` loops with ``--entries`` history entries each
   (1,000 x 100 = 100,000 by default), made from one real loop run through
   the engine and copied with new ids, each cut at a different entry so the
   steps and iterations differ. Measured headless at 160x48: listing and
   filling the table, keypresses (cursor down / page down in the table, view
   switches, typing in the filter) as wall time from the key to the UI being
   idle again, the refresh after another process changes one loop (watcher ->
   row updated), opening one loop's 100-entry history, and the process RSS.

Prints tables; never part of the test run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.api import ARS  # noqa: E402
from core.config import Settings  # noqa: E402


def rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def settings(state: Path) -> Settings:
    return Settings(state_dir=state, neo4j_uri=None)


# -- the large state --------------------------------------------------------------------
def template_loop(state: Path, iterations: int) -> tuple[str, Path, Path]:
    """One real loop through the engine with enough iterations for the longest cut."""
    goal = {
        "goal_id": "bench-long-run",
        "name": "A long-running loop for the dashboard bench",
        "goal": "Keep the nightly recall benchmark green across many iterations",
        "budget": {"max_iterations": iterations, "max_consecutive_failures": iterations},
        "script": [{"action": f"check run {i}", "outcome": "unknown", "reason": f"run {i}: no verdict yet"}
                   for i in range(iterations + 1)],
    }
    with ARS(settings(state)) as ars:
        ars.loops.store.keep_last = 10_000  # the template keeps every entry; the copies hold --entries each
        s = ars.loop_start(goal)
        store = ars.loops.store
        return s.loop_id, store.latest_path(s), store.history_path(s)


def make_large_state(state: Path, loops: int, entries: int) -> int:
    iterations = entries // 6 + 4
    tmp = state.parent / "template"
    loop_id, _latest, history = template_loop(tmp, iterations)
    lines = history.read_bytes().splitlines(keepends=True)
    assert len(lines) >= entries + 10, f"template has only {len(lines)} entries"
    (state / "checkpoints").mkdir(parents=True, exist_ok=True)
    shutil.copy2(tmp / "memory.sqlite", state / "memory.sqlite")
    shutil.copy2(tmp / "ledger.jsonl", state / "ledger.jsonl")
    total = 0
    old = loop_id.encode()
    for i in range(loops):
        new_id = f"loop-{i:012x}"
        cut = entries - 5 + (i % 11)  # entries-5 .. entries+5 (mean: --entries), so steps differ
        body = [ln.replace(old, new_id.encode()) for ln in lines[:cut]]
        goal = f"bench-{i % 40:02d}"
        base = state / "checkpoints" / f"{goal}__{new_id}"
        body = [ln.replace(b'"goal_id":"bench-long-run"', f'"goal_id":"{goal}"'.encode()) for ln in body]
        Path(f"{base}.history.jsonl").write_bytes(b"".join(body))
        last = json.loads(body[-1])
        Path(f"{base}.json").write_text(json.dumps(last["state"]), encoding="utf-8")
        total += len(body)
    shutil.rmtree(tmp)
    return total


# -- measuring ----------------------------------------------------------------------------
async def timed_keys(pilot, keys: list[str], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        for key in keys:
            t0 = time.perf_counter()
            await pilot.press(key)
            await pilot.pause()  # the key handled and the screen refreshed
            out.append((time.perf_counter() - t0) * 1000)
    return out


def p(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


async def headless(state: Path, loops: int) -> dict:
    from tui.app import ArsApp

    res: dict = {}
    rss0 = rss_mb()
    t0 = time.perf_counter()
    app = ArsApp(ARS(settings(state)))
    first: dict[str, float] = {}

    async with app.run_test(size=(160, 48)) as pilot:
        first["frame"] = (time.perf_counter() - t0) * 1000
        while not app.store.loaded:
            await asyncio.sleep(0.01)
        table = app.screen.query_one("#loops-table")
        while table.row_count < loops:
            await pilot.pause(0.01)
        await pilot.pause()
        first["table"] = (time.perf_counter() - t0) * 1000
        res["first frame (app created -> mounted)"] = first["frame"]
        res[f"loops listed and table filled ({loops} rows)"] = first["table"]
        res["rss after load (MB)"] = rss_mb()
        down = await timed_keys(pilot, ["down"], 200)
        res["key: down in table p50 / p95 / max (ms)"] = (p(down, .5), p(down, .95), max(down))
        page = await timed_keys(pilot, ["pagedown"], 30)
        res["key: pagedown p50 / p95 / max (ms)"] = (p(page, .5), p(page, .95), max(page))
        switch_first = await timed_keys(pilot, ["2", "3", "4", "1"], 1)
        res["first switch to inbox / recall / checkpoints / loops (ms)"] = tuple(switch_first)
        switch = await timed_keys(pilot, ["2", "3", "4", "1"], 10)
        res["key: switch view p50 / p95 / max (ms)"] = (p(switch, .5), p(switch, .95), max(switch))
        await pilot.press("slash")
        typing = await timed_keys(pilot, list("bench-07"), 1)
        res["key: typing in the loops filter p50 / max (ms)"] = (p(typing, .5), max(typing))
        await pilot.press("escape")
        await pilot.pause()
        # another process changes one loop: how long until its row shows it
        open_ids = [i for i, s in app.store.states.items() if s.status not in ("done", "aborted")]
        lat = []
        for i, target in enumerate(open_ids[:5]):
            version = app.store.versions[target]
            with ARS(settings(state)) as other:
                t1 = time.perf_counter()
                other.loop_cancel(target, f"bench {i}")
            while app.store.versions.get(target) == version:
                await asyncio.sleep(0.005)
            await pilot.pause()
            lat.append((time.perf_counter() - t1) * 1000)
        res["refresh: external change -> row updated p50 / max (ms, watcher debounce 150)"] = (p(lat, .5), max(lat))
        # the checkpoints view: one loop's history (100 entries) opened
        await pilot.press("4")
        await pilot.pause()
        screen = app.screen
        target = list(app.store.states)[1]
        t2 = time.perf_counter()
        screen.select_loop(target)
        while screen.selected_entry() is None:
            await pilot.pause(0.005)
        res["open one loop's history in Checkpoints (ms)"] = (time.perf_counter() - t2) * 1000
        steps = await timed_keys(pilot, ["left_square_bracket"], 50)
        res["key: [ step history p50 / max (ms)"] = (p(steps, .5), max(steps))
        res["rss at the end (MB)"] = rss_mb()
        res["peak rss (MB)"] = peak_mb()
        res["rss before the app (MB)"] = rss0
        await pilot.press("q")
    return res


def tmux_first_paint(state: Path, text: str, runs: int = 3) -> list[float]:
    """Process start -> the screen shows ``text`` (in a real terminal, tmux 160x48)."""
    if shutil.which("tmux") is None:
        return []
    out = []
    for i in range(runs):
        sock = f"ars-bench-{os.getpid()}-{i}"
        t0 = time.perf_counter()
        subprocess.run(["tmux", "-L", sock, "new-session", "-d", "-s", f"b{i}", "-x", "160", "-y", "48",
                        f"{sys.executable} -m tui.cli tui --state {state}"], check=True, cwd=ROOT)
        try:
            while time.perf_counter() - t0 < 60:
                screen = subprocess.run(["tmux", "-L", sock, "capture-pane", "-p", "-t", f"b{i}"],
                                        capture_output=True, text=True).stdout
                if text in screen:
                    out.append((time.perf_counter() - t0) * 1000)
                    break
                time.sleep(0.01)
        finally:
            subprocess.run(["tmux", "-L", sock, "kill-server"], capture_output=True)
    return out


def tmux_keys(state: Path, loops: int, presses: int = 40) -> dict:
    """Keypress -> answered on screen, in a real terminal: send a key with tmux,
    poll capture-pane until the screen shows its effect."""
    if shutil.which("tmux") is None:
        return {}
    sock = f"ars-bench-keys-{os.getpid()}"
    T = ["tmux", "-L", sock]

    def screen() -> str:
        return subprocess.run([*T, "capture-pane", "-p", "-t", "k"], capture_output=True, text=True).stdout

    def cursor_id() -> str:
        """The loop id on the highlighted row (the cursor's background, textual-dark)."""
        raw = subprocess.run([*T, "capture-pane", "-e", "-p", "-t", "k"], capture_output=True, text=True).stdout
        m = re.search(r"48;5;32m (loop-[0-9a-f]+)", raw)
        return m.group(1) if m else ""

    def detail_id(text: str) -> str:
        for line in text.splitlines():
            parts = line.split("│")
            if len(parts) >= 3 and " · goal " in parts[-2]:
                return parts[-2].strip().split(" ")[0]
        return ""

    def until(cond, limit: float = 20.0) -> float:
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < limit:
            if cond(screen()):
                return (time.perf_counter() - t0) * 1000
        raise RuntimeError("the screen never showed the key's effect")

    subprocess.run([*T, "new-session", "-d", "-s", "k", "-x", "160", "-y", "48",
                    f"{sys.executable} -m tui.cli tui --state {state}"], check=True, cwd=ROOT)
    out: dict = {}
    try:
        until(lambda s: f"{loops} loops" in s and detail_id(s), 120)
        time.sleep(0.5)
        down, detail = [], []
        for _ in range(presses):
            before = cursor_id()
            t0 = time.perf_counter()
            subprocess.run([*T, "send-keys", "-t", "k", "Down"])
            while cursor_id() in ("", before):
                if time.perf_counter() - t0 > 20:
                    raise RuntimeError("the cursor never moved")
            down.append((time.perf_counter() - t0) * 1000)
            now = cursor_id()
            until(lambda s: detail_id(s) == now)
            detail.append((time.perf_counter() - t0) * 1000)
            time.sleep(0.1)
        out["down in the loops table: key -> cursor on the next row, p50 / p95 / max (ms)"] = (
            p(down, .5), p(down, .95), max(down))
        out["down: key -> detail pane shows that loop (50 ms rest), p50 / p95 / max (ms)"] = (
            p(detail, .5), p(detail, .95), max(detail))
        switch = []
        time.sleep(0.5)
        for _ in range(10):
            for key, signs in (("2", ("Request", "Nothing is waiting")), ("1", ("it/max",))):
                t0 = time.perf_counter()
                subprocess.run([*T, "send-keys", "-t", "k", key])
                until(lambda s: any(x in s for x in signs))
                switch.append((time.perf_counter() - t0) * 1000)
        out["switch view 2 <-> 1: key -> new view drawn, p50 / p95 / max (ms)"] = (
            p(switch, .5), p(switch, .95), max(switch))
    finally:
        subprocess.run([*T, "kill-server"], capture_output=True)
    return out


def show(title: str, rows: dict) -> None:
    print(f"\n{title}")
    width = max(len(k) for k in rows)
    for k, v in rows.items():
        if isinstance(v, tuple):
            val = " / ".join(f"{x:.1f}" for x in v)
        elif isinstance(v, float):
            val = f"{v:.1f}"
        else:
            val = str(v)
        print(f"  {k:<{width}}  {val}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--loops", type=int, default=1000)
    ap.add_argument("--entries", type=int, default=100)
    ap.add_argument("--keep", type=Path, help="build the large state here and keep it")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ars-bench-"))
    try:
        from core.demo import seed

        demo = work / "demo"
        t = time.perf_counter()
        seed(settings=settings(demo))
        seeded = (time.perf_counter() - t) * 1000
        paint = tmux_first_paint(demo, "8 loops")
        show("demo state (8 loops, 18 sessions + loop episodes)", {
            "seed (ars demo --no-tui, in-process) (ms)": seeded,
            "process start -> first paint with the loops, tmux 160x48, each run (ms)":
                tuple(paint) if paint else "tmux missing",
        })
        show("demo state, real terminal (tmux 160x48)", tmux_keys(demo, 8, presses=7))
        demo_res = asyncio.run(headless(demo, 8))
        show("demo state, headless 160x48 (key times include Pilot's idle wait, ~85 ms)", demo_res)

        big = args.keep or (work / "big")
        t = time.perf_counter()
        total = make_large_state(big, args.loops, args.entries)
        built = (time.perf_counter() - t) * 1000
        size = sum(f.stat().st_size for f in (big / "checkpoints").iterdir()) / 2**20
        paint = tmux_first_paint(big, f"{args.loops} loops", runs=2)
        show(f"large state: {args.loops} loops, {total} history entries ({size:.0f} MB of checkpoints)", {
            "built (ms)": built,
            "process start -> header shows every loop listed, tmux 160x48 (ms)": tuple(paint) if paint else "-",
        })
        show(f"large state, real terminal (tmux 160x48, {args.loops} loops)", tmux_keys(big, args.loops))
        big_res = asyncio.run(headless(big, args.loops))
        show(f"large state, headless 160x48 ({args.loops} loops; key times include Pilot's idle wait)", big_res)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
