"""Hermes with ARS's memory provider: what a turn costs, and how fast ``ars mcp`` answers.

    python bench/hermes_turn.py [--episodes 10000] [--turns 200] [--starts 10]

A state directory with a seeded synthetic corpus (bench/synthetic.py) ingested. Per
turn (``prefetch``, before Hermes' model call; Hermes waits for it):

* the provider: ``ArsMemoryProvider.prefetch`` (tui/agents/hermes_provider/), as
  Hermes calls it, over its pipe to the long-lived ``ars hook hermes --serve``;
* beside it, in the same run: the pipe alone (``ping``: the transport's floor),
  ``ARS.context`` called in this process (the engine alone), and a fresh ``ars
  context --json`` process per turn (what a hook without a long-lived process pays);
* the turn's end: ``sync_turn`` until ARS acknowledged the capture (durable and
  recallable when it returns; Hermes runs it on its background worker).

And ``ars mcp``'s start, from spawning it to the answers of ``initialize`` and
``tools/list`` (what Hermes' 1.5 s MCP discovery waits for): the command as it is
(its front answers from the recorded catalog while the SDK loads) beside the SDK
path it replaced (the typer CLI, ARS opened, then the SDK's stdio server).

Each series idle, then beside two busy loops (``sh -c 'while :; do :; done'``).
Targets are printed, never asserted: prefetch p95 <= 50 ms, capture p95 <= 1 s,
MCP answers within 1.5 s. Tables go to stdout and bench/out/hermes_turn.txt.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from recall_latency import BusyLoops, Out, ars_command, loadavg, ms, pct, progress  # noqa: E402
from synthetic import make_queries, write_corpus  # noqa: E402

from core.api import ARS, load_settings  # noqa: E402
from tui.agents import hermes_provider  # noqa: E402

TARGET_TURN_P95 = 50.0      # ms: what the provider adds to a turn
TARGET_CAPTURE_P95 = 1000.0  # ms: turn end -> recallable
TARGET_MCP = 1500.0          # ms: Hermes' mcp_discovery_timeout
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "1"}}}
OLD_MCP = """
import sys, anyio
import tui.cli.main  # the typer CLI `ars mcp` went through
from tui.agents.mcp_front import open_ars
from tui.agents.mcp_server import build_server
ars = open_ars(sys.argv[1], None)
anyio.run(build_server(ars).run_stdio_async)
"""


def env() -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith("ARS_")}
    e["PYTHONPATH"] = str(ROOT) + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    e["ARS_RECALL_DAEMON"] = "off"
    return e


def build_state(state: Path, episodes: int) -> None:
    corpus = state.parent / "episodes.jsonl"
    write_corpus(corpus, episodes, seed=7)
    with ARS(load_settings(state_dir=state)) as a:
        a.ingest([corpus], fmt="episodes")
        a.remember("day 1: ran boss_scraper.py; it printed 抓取了 137 个产品经理职位", session_id="day1")


def stats(values: list[float], target: float | None = None) -> list[str]:
    row = [str(len(values)), ms(pct(values, 50)), ms(pct(values, 95)), ms(max(values))]
    return row + ([f"{'ok' if pct(values, 95) <= target else 'MISSED'} (p95 <= {target:g} ms)"] if target else ["-"])


def turn_series(state: Path, queries: list[str], tmp: Path, tag: str) -> dict[str, list[float]]:
    """Each way of getting a turn's context, timed over the same prompts (sessions named by ``tag``:
    a capture of a turn id seen before would return at once, having nothing to store)."""
    config = tmp / "ars.json"
    config.write_text(json.dumps({"command": ars_command() + ["hook", "hermes", "--serve", "--state", str(state)]}))
    provider = hermes_provider.ArsMemoryProvider(str(config))
    os.environ["PYTHONPATH"] = env()["PYTHONPATH"]  # the served ARS is this checkout's
    provider.initialize(f"{tag}-0", hermes_home=str(tmp / "hermes-home"), platform="cli")
    out: dict[str, list[float]] = {"prefetch": [], "ping": [], "context": [], "capture": [], "fresh": [],
                                   "first": []}
    injected = 0
    local = ARS(load_settings(state_dir=state))  # the engine alone, turn for turn beside the provider
    try:
        local.context_prepare()
        t0 = time.perf_counter()
        provider.prefetch("warm up")  # the first turn waits for ARS to start (Hermes' own start overlaps it)
        out["first"].append((time.perf_counter() - t0) * 1000)
        for i, q in enumerate(queries):
            if i % 10 == 0:
                provider.on_session_switch(f"{tag}-{i // 10}", reset=True)  # a session of ten turns
            provider.on_turn_start(i % 10 + 1, q)
            t0 = time.perf_counter()
            text = provider.prefetch(q)
            out["prefetch"].append((time.perf_counter() - t0) * 1000)
            injected += bool(text)
            t0 = time.perf_counter()
            local.context(q, session=f"{tag}-local-{i // 10}", agent="bench")
            out["context"].append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            got = provider._ars.ask("ping", 5.0)
            out["ping"].append((time.perf_counter() - t0) * 1000)
            assert got.get("ok"), got
            t0 = time.perf_counter()
            provider.sync_turn(q, f"answer {i}: done", session_id=f"{tag}-{i // 10}",
                               messages=[{"role": "user", "content": q}, {"role": "assistant", "content": "done"}])
            out["capture"].append((time.perf_counter() - t0) * 1000)
        if provider._unsynced:
            raise SystemExit(f"{len(provider._unsynced)} captures failed: see the log lines above")
    finally:
        provider.shutdown()
        local.close()
    for q in queries[: max(5, len(queries) // 10)]:
        t0 = time.perf_counter()
        subprocess.run(ars_command() + ["context", q, "--json", "--no-record", "--state", str(state)],
                       capture_output=True, env=env(), timeout=120, check=True)
        out["fresh"].append((time.perf_counter() - t0) * 1000)
    progress(f"{injected}/{len(queries)} turns got memory injected")
    return out


def mcp_start(cmd: list[str], starts: int) -> tuple[list[float], list[float]]:
    inits, lists = [], []
    for _ in range(starts):
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env())
        p.stdin.write((json.dumps(INIT) + "\n").encode())
        p.stdin.flush()
        p.stdout.readline()
        inits.append((time.perf_counter() - t0) * 1000)
        p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
                      b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n')
        p.stdin.flush()
        p.stdout.readline()
        lists.append((time.perf_counter() - t0) * 1000)
        p.stdin.close()
        p.wait(60)
    return inits, lists


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--episodes", type=int, default=10_000)
    ap.add_argument("--turns", type=int, default=200)
    ap.add_argument("--starts", type=int, default=10)
    args = ap.parse_args()
    if not hasattr(ARS, "context"):
        raise SystemExit("this tree has no ARS.context (core's per-turn context engine): nothing to measure")
    out = Out(ROOT / "bench" / "out" / "hermes_turn.txt")
    with tempfile.TemporaryDirectory(prefix="ars-bench-hermes-") as tmp_s:
        tmp = Path(tmp_s)
        state = tmp / "state"
        progress(f"ingesting {args.episodes:,} synthetic episodes")
        build_state(state, args.episodes)
        queries = make_queries(args.turns, seed=11, corpus=tmp / "episodes.jsonl")
        out(f"# Hermes: ARS's memory provider per turn, and `ars mcp`'s start ({args.episodes:,} episodes, "
            f"{args.turns} turns, {os.cpu_count()} cores, load {loadavg()})\n")
        ars = ars_command()
        for label, busy in (("idle", 0), ("beside two busy loops", 2)):
            with BusyLoops(busy) if busy else _Nothing():
                progress(f"turns, {label}")
                series = turn_series(state, queries, tmp, "busy" if busy else "idle")
                progress(f"ars mcp starts, {label}")
                new_init, new_list = mcp_start(ars + ["mcp", "--state", str(state)], args.starts)
                old_init, old_list = mcp_start([sys.executable, "-c", OLD_MCP, str(state)], args.starts)
            out(f"## Per turn, {label} (ms)\n")
            out.table(["path", "n", "p50", "p95", "max", "target"], [
                ["provider prefetch (pipe + ARS.context in `ars hook hermes --serve`)",
                 *stats(series["prefetch"], TARGET_TURN_P95)],
                ["  the pipe alone (ping)", *stats(series["ping"])],
                ["  ARS.context in this process (the engine alone)", *stats(series["context"])],
                ["  baseline: fresh `ars context --json` process per turn", *stats(series["fresh"])],
                ["first turn, ARS starting with Hermes (at most; Hermes' start overlaps it)", *stats(series["first"])],
                ["turn end -> recallable (sync_turn, capture acknowledged)",
                 *stats(series["capture"], TARGET_CAPTURE_P95)]])
            out(f"## `ars mcp` start to its answers, {label} (ms)\n")
            out.table(["server", "answer", "n", "p50", "p95", "max", "target"], [
                ["`ars mcp` (front, recorded catalog)", "initialize", *stats(new_init, TARGET_MCP)],
                ["", "tools/list", *stats(new_list, TARGET_MCP)],
                ["baseline: the SDK path it replaced", "initialize", *stats(old_init, TARGET_MCP)],
                ["", "tools/list", *stats(old_list, TARGET_MCP)]])


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass


if __name__ == "__main__":
    main()
