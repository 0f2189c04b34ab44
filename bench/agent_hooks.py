"""Agent hooks: ``ars hook hermes`` for a tool call that passes (fresh process per
call, as Hermes runs it), beside Claude Code's hook and ``python -c pass``; and the
decision round trip, request -> the supervisor's signed approval -> the agent told,
for Hermes (``pre_tool_call``) and Claude Code (``PermissionRequest``, and
``PreToolUse`` in bypassPermissions mode).

    python bench/agent_hooks.py [--calls 100] [--trials 10]

A fresh state directory with a supervisor key; every hook command pins it
(``--supervisor``), as ``ars install`` writes it. Pass: the hook fed one event on
stdin, timed from spawn to exit (its answer is read when it exits). Round trip: the
hook holds ``rm -rf <dir>``; once its request is in the inbox, ``ars inbox approve ID
--passphrase-fd N`` (a new process: it unlocks the key and signs) decides it. Start
-> answer: from spawning that command to the hook's exit with its allow; recorded ->
answer: from the decision file's mtime to the hook's exit (the hook's own share:
its poll, the signature check, answering). Targets are printed, never asserted.
Tables go to stdout and bench/out/agent_hooks.txt; progress to stderr.
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

from recall_latency import Out, ars_command, child_env, loadavg, ms, pct, progress  # noqa: E402

from core.inbox import Inbox  # noqa: E402
from signed_approval import approve, supervise  # noqa: E402

TARGET_PASS_P95 = 150.0  # ms: `ars hook hermes`, a call that passes, fresh process


def run(cmd: list[str], stdin: str, env: dict, cwd: Path, timeout: float = 300.0):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)
    return (time.perf_counter() - t0) * 1000, p


def hermes_event(tool: str, tool_input: dict, cwd: Path, call: str) -> str:
    return json.dumps({"hook_event_name": "pre_tool_call", "tool_name": tool, "tool_input": tool_input,
                       "session_id": "bench", "cwd": str(cwd), "extra": {"tool_call_id": call, "task_id": ""}})


def claude_event(name: str, tool: str, tool_input: dict, cwd: Path, call: str, mode: str = "default") -> str:
    ev = {"session_id": "bench", "transcript_path": str(cwd / "t.jsonl"), "cwd": str(cwd), "permission_mode": mode,
          "hook_event_name": name, "tool_name": tool, "tool_input": tool_input}
    if name != "PermissionRequest":  # Claude Code sends no tool_use_id with a PermissionRequest
        ev["tool_use_id"] = call
    return json.dumps(ev)


class Row:
    def __init__(self, name: str):
        self.name, self.wall, self.recorded, self.errors = name, [], [], []

    def cells(self, extra: bool = False) -> list[str]:
        cells = [self.name, str(len(self.wall)), ms(pct(self.wall, 50)), ms(pct(self.wall, 95)),
                 ms(max(self.wall) if self.wall else float("nan"))]
        if extra:
            cells += [ms(pct(self.recorded, 50)), ms(pct(self.recorded, 95))]
        return cells + [str(len(self.errors)) + (f" ({self.errors[0][:80]})" if self.errors else "")]


def passing(args, env, project: Path, hermes: list[str], claude: list[str]) -> list[Row]:
    cases = [(Row("`python -c pass` (the floor)"), [sys.executable, "-c", "pass"], lambda i: ""),
             (Row("`ars hook hermes`, terminal `ls -la`"), hermes,
              lambda i: hermes_event("terminal", {"command": "ls -la"}, project, f"c{i}")),
             (Row("`ars hook hermes`, read_file in the project"), hermes,
              lambda i: hermes_event("read_file", {"path": str(project / "README.md")}, project, f"c{i}")),
             (Row("`ars hook claude-code`, PreToolUse Bash `ls -la`"), claude,
              lambda i: claude_event("PreToolUse", "Bash", {"command": "ls -la"}, project, f"t{i}"))]
    for row, cmd, ev in cases:
        for i in range(3):  # untimed: page cache, bytecode
            run(cmd, ev(i), env, project)
    for i in range(args.calls):
        for row, cmd, ev in cases:  # interleaved: a load spike hits every row alike
            dt, p = run(cmd, ev(i), env, project)
            row.wall.append(dt)
            if p.returncode != 0 or p.stdout.strip():
                row.errors.append(f"exit {p.returncode}, stdout {p.stdout.strip()[:60]!r}")
    return [c[0] for c in cases]


def round_trip(args, env, project: Path, state: Path, name: str, cmd: list[str], make_event, allowed) -> Row:
    row = Row(name)
    inbox = Inbox(state)
    for trial in range(args.trials):
        before = {r.id for r in inbox.list()}
        result: dict = {}

        def hook() -> None:
            dt, p = run(cmd, make_event(trial), env, project)
            result["t"], result["epoch"], result["p"] = time.perf_counter(), time.time(), p

        th = threading.Thread(target=hook)
        th.start()
        deadline = time.monotonic() + 60
        new: list = []
        while not new and time.monotonic() < deadline and th.is_alive():
            new = [r for r in inbox.list("pending") if r.id not in before]
            time.sleep(0.01)
        if not new:
            th.join(300)
            row.errors.append(f"no request: {result.get('p').stdout[:80] if result.get('p') else 'no answer'}")
            continue
        t0 = time.perf_counter()
        d = approve(ars_command(), state, new[0].id, env=env, cwd=project)
        th.join(300)
        p = result.get("p")
        if d.returncode != 0 or p is None or not allowed(p):
            row.errors.append(f"approve exit {d.returncode} {' '.join(d.stderr.split())[-80:]}; hook said "
                              f"{(p.stdout if p else '')[:80]!r}")
            continue
        row.wall.append((result["t"] - t0) * 1000)
        row.recorded.append((result["epoch"] - inbox.decision_path(new[0].id).stat().st_mtime) * 1000)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=100, help="fresh hook processes per passing case")
    ap.add_argument("--trials", type=int, default=10, help="decision round trips per agent")
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    out = Out(ROOT / "bench" / "out" / "agent_hooks.txt")
    t_start = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="ars-bench-agent-hooks-", dir=args.workdir))
    try:
        state, project = work / "state", work / "project"
        project.mkdir()
        pin = supervise(state)
        env = child_env(None, work / "pycache")
        base = ["--state", str(state), "--supervisor", pin]
        hermes = ars_command() + ["hook", "hermes", *base, "--timeout", "300"]
        claude = ars_command() + ["hook", "claude-code", *base]
        out("# Agent hooks: Hermes and Claude Code")
        out()
        out(f"Machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, load average at start {loadavg()}.")
        out()
        progress(f"passing calls: {args.calls} fresh processes per case")
        rows = passing(args, env, project, hermes, claude)
        out("## A tool call that passes the gate (fresh process per call)")
        out()
        out("Wall time from spawn to exit, one event on stdin, no output (the agent runs the call); "
            "interleaved with `python -c pass`. Bytecode cached, no ARS_* variable.")
        out()
        out.table(["process", "calls", "p50 ms", "p95 ms", "max ms", "errors"], [r.cells() for r in rows])
        progress(f"round trips: {args.trials} per agent")
        victim = project / "build"
        rm = {"command": f"rm -rf {victim}"}
        trips = [
            round_trip(args, env, project, state, "Hermes `pre_tool_call` (allow = no output)", hermes,
                       lambda i: hermes_event("terminal", rm, project, f"h{i}"),
                       lambda p: p.returncode == 0 and p.stdout == ""),
            round_trip(args, env, project, state, "Claude Code `PermissionRequest`", claude,
                       lambda i: claude_event("PermissionRequest", "Bash", {**rm, "description": f"t{i}"}, project, ""),
                       lambda p: '"behavior": "allow"' in p.stdout),
            round_trip(args, env, project, state, "Claude Code `PreToolUse` (bypassPermissions)", claude,
                       lambda i: claude_event("PreToolUse", "Bash", rm, project, f"p{i}", "bypassPermissions"),
                       lambda p: '"permissionDecision": "allow"' in p.stdout),
        ]
        out("## Decision round trip: request -> signed approval -> the agent told")
        out()
        out("The hook holds `rm -rf`; `ars inbox approve ID --passphrase-fd N` (a new process that unlocks the "
            "supervisor's key and signs) decides it. Start -> answer: from spawning the approval to the hook's exit "
            "with its allow. Recorded -> answer: from the decision file's mtime to that exit (the hook's share).")
        out()
        out.table(["agent, event", "trials", "start -> answer p50 ms", "p95 ms", "max ms",
                   "recorded -> answer p50 ms", "p95 ms", "errors"], [t.cells(extra=True) for t in trips])
        hermes_row = rows[1]
        p95 = pct(hermes_row.wall, 95)
        out("## Targets")
        out()
        out.table(["target", "goal", "measured", "verdict"],
                  [["`ars hook hermes`, passing call, p95", f"≤ {TARGET_PASS_P95:.0f} ms",
                    f"{ms(p95)} (floor {ms(pct(rows[0].wall, 95))})", "met" if p95 <= TARGET_PASS_P95 else "missed"]])
        out(f"Run time {(time.monotonic() - t_start):.0f} s; load average at end {loadavg()}.")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
