"""OpenClaw gate: what ARS's OpenClaw plugin costs a tool call that passes, and the
decision round trip of a held one (request -> the supervisor's signed approval ->
OpenClaw told).

    python bench/openclaw_gate.py [--calls 200] [--trials 8]

The plugin's own code (tui/agents/openclaw_plugin/index.js) runs under Node 24
(.agents/bin/node, from scripts/agents/install-openclaw) in a minimal host
(tests/agents_stub/openclaw_plugin_host.mjs) that calls its ``register(api)`` as
OpenClaw does and its ``before_tool_call`` handler one call at a time; the time is
the handler's, from its call to its answer (the Node side: the request to the
long-lived checker ``ars hook openclaw --serve``, the gate, the answer). The first
call (which starts the checker) is shown apart. Beside it: the same check as a
fresh process per call (``ars hook openclaw`` one-shot), the design the checker
replaces. Round trip: the handler holds ``rm -rf <dir>``; once its request is in
the inbox, ``ars inbox approve ID --passphrase-fd N`` (a new process: unlock the key,
sign) decides it; timed from spawning that command to the handler's answer
(OpenClaw told), and from the decision's file to that answer (the hold's share).
A fresh state directory with a supervisor key pinned in the plugin's config. Targets
are printed, never asserted. Tables to stdout and bench/out/openclaw_gate.txt.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from recall_latency import Out, ars_command, loadavg, ms, pct, progress  # noqa: E402
from signed_approval import approve, supervise  # noqa: E402

TARGET_PASS_P95 = 150.0  # ms: the plugin's check of a call that passes
NODE = ROOT / ".agents" / "bin" / "node"
HOST = ROOT / "tests" / "agents_stub" / "openclaw_plugin_host.mjs"
PLUGIN = ROOT / "tui" / "agents" / "openclaw_plugin"


def env_clean() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.upper().startswith(("ARS_", "OPENCLAW_"))}


class Host:
    """The plugin under its minimal host; ``call()`` runs the handler once and waits."""

    def __init__(self, config: dict, cwd: Path):
        self.proc = subprocess.Popen([str(NODE), str(HOST), str(PLUGIN), json.dumps(config)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
                                     env=env_clean())
        self.n = 0
        ready = json.loads(self.proc.stdout.readline())
        assert ready.get("ready"), ready

    def send(self, tool: str, params: dict, call_id: str = "") -> int:
        self.n += 1
        self.proc.stdin.write(json.dumps({"n": self.n, "tool": tool, "params": params, "toolCallId": call_id}) + "\n")
        self.proc.stdin.flush()
        return self.n

    def answer(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the plugin host ended: {self.proc.stderr.read()[-2000:]}")
        return json.loads(line)

    def call(self, tool: str, params: dict, call_id: str = "") -> tuple[float, dict]:
        t0 = time.perf_counter()
        self.send(tool, params, call_id)
        a = self.answer()
        return (time.perf_counter() - t0) * 1000, a

    def close(self) -> None:
        try:
            self.proc.stdin.close()
            self.proc.wait(20)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()


def passing_calls(project: Path) -> list[tuple[str, dict]]:
    return [("exec", {"command": "ls -la"}), ("exec", {"command": "git status --short"}),
            ("exec", {"command": "grep -rn TODO src | head -20"}), ("read", {"path": str(project / "README.md")}),
            ("write", {"path": str(project / "notes.txt"), "content": "x"}),
            ("edit", {"path": str(project / "notes.txt"), "oldText": "x", "newText": "y"}),
            ("web_search", {"query": "sqlite wal"}), ("web_fetch", {"url": "https://example.com/"}),
            ("exec", {"command": "python -m pytest -q tests/test_x.py"}), ("exec", {"command": "cat README.md | wc -l"})]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--oneshot", type=int, default=30, help="fresh-process checks to compare with")
    ap.add_argument("--trials", type=int, default=8, help="held calls approved (round trip)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "openclaw_gate.txt")
    args = ap.parse_args()
    if not NODE.exists():
        sys.exit(f"no Node at {NODE}: run scripts/agents/install-openclaw first")
    out = Out(args.out)
    ars = ars_command()
    tmp = Path(tempfile.mkdtemp(prefix="ars-bench-openclaw-"))
    try:
        state, project = tmp / "state", tmp / "project"
        project.mkdir()
        (project / "README.md").write_text("bench\n")
        env = env_clean()
        pin = supervise(state)
        config = {"ars": ars, "state": str(state), "supervisor": pin, "project": str(project), "waitSeconds": 50}
        host = Host(config, project)

        progress(f"passing calls: {args.calls} through the plugin's handler")
        time.sleep(1.0)  # OpenClaw loads plugins seconds before the model's first tool call
        first, a = host.call("exec", {"command": "ls"})
        assert a["result"] is None, a
        calls = passing_calls(project)
        handler_ms, wall_ms = [], []
        for i in range(args.calls):
            tool, params = calls[i % len(calls)]
            wall, a = host.call(tool, params)
            assert a.get("result") is None, (tool, params, a)  # every one of these passes
            handler_ms.append(a["ms"])
            wall_ms.append(wall)

        progress(f"fresh-process checks: {args.oneshot}")
        oneshot = []
        base = ars + ["hook", "openclaw", "--state", str(state), "--supervisor", pin]
        for i in range(args.oneshot):
            tool, params = calls[i % len(calls)]
            ev = json.dumps({"event": "before_tool_call", "tool": tool, "params": params, "cwd": str(project),
                             "project": str(project), "session": "bench", "call_id": f"c{i}"})
            t0 = time.perf_counter()
            p = subprocess.run(base, input=ev, capture_output=True, text=True, env=env, cwd=project)
            oneshot.append((time.perf_counter() - t0) * 1000)
            assert json.loads(p.stdout)["verdict"] == "allow", p.stdout + p.stderr

        progress(f"round trips: {args.trials} held rm -rf approved")
        from core.inbox import Inbox

        inbox = Inbox(state)
        total, share, held_ms = [], [], []
        for t in range(args.trials):
            victim = project / f"victim{t}"
            victim.mkdir()
            seen = {r.id for r in inbox.list()}
            t_send = time.perf_counter()
            host.send("exec", {"command": f"rm -rf {victim}"}, f"held-{t}")
            req = None
            while req is None:
                new = [r for r in inbox.list("pending") if r.id not in seen]
                req = new[0] if new else None
                if req is None:
                    time.sleep(0.005)
            held_ms.append((time.perf_counter() - t_send) * 1000)
            result: dict = {}
            reader = threading.Thread(target=lambda: result.update(host.answer()))
            reader.start()
            t0 = time.perf_counter()
            approve(ars, state, req.id, env=env).check_returncode()
            reader.join(120)
            t_told, wall_told = time.perf_counter(), time.time()
            assert result.get("result") is None, result  # approved: the handler lets the call run
            total.append((t_told - t0) * 1000)
            decided = state / "inbox" / f"{req.id}.decision.json"
            if decided.exists():
                share.append(max(0.0, (wall_told - decided.stat().st_mtime) * 1000))
        host.close()

        out(f"# OpenClaw gate (load {loadavg()}, {os.cpu_count()} CPUs)")
        out()
        out("| what | n | p50 ms | p95 ms | max ms | target |")
        out("|---|---|---|---|---|---|")
        out(f"| plugin before_tool_call, a call that passes (handler) | {len(handler_ms)} | {ms(pct(handler_ms, 50))} "
            f"| {ms(pct(handler_ms, 95))} | {ms(max(handler_ms))} | p95 <= {TARGET_PASS_P95:g} "
            f"({'met' if pct(handler_ms, 95) <= TARGET_PASS_P95 else 'MISSED'}) |")
        out(f"| same, seen from the caller (pipe to the host and back) | {len(wall_ms)} | {ms(pct(wall_ms, 50))} "
            f"| {ms(pct(wall_ms, 95))} | {ms(max(wall_ms))} | |")
        out(f"| first call, 1 s after the plugin loaded (checker started at load) | 1 | {ms(first)} | | | |")
        out(f"| one-shot `ars hook openclaw` per call (not used for passing calls) | {len(oneshot)} "
            f"| {ms(pct(oneshot, 50))} | {ms(pct(oneshot, 95))} | {ms(max(oneshot))} | |")
        out(f"| held call: handler called -> request in the inbox | {len(held_ms)} | {ms(pct(held_ms, 50))} "
            f"| {ms(pct(held_ms, 95))} | {ms(max(held_ms))} | |")
        out(f"| round trip: `ars inbox approve` spawned -> handler allows (OpenClaw told) | {len(total)} "
            f"| {ms(pct(total, 50))} | {ms(pct(total, 95))} | {ms(max(total))} | |")
        if share:
            out(f"| of which: decision recorded -> handler allows | {len(share)} | {ms(pct(share, 50))} "
                f"| {ms(pct(share, 95))} | {ms(max(share))} | |")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
