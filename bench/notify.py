"""Telling the supervisor: how fast a new request reaches a webhook, and that a
dead webhook never slows the agent.

    .venv/bin/python bench/notify.py [--n 30]

1. ``created -> POST received``: requests made through the API (what the MCP
   server and the hooks call) with ``ARS_NOTIFY_URL`` pointing at a local HTTP
   server; the time from just before ``request_approval`` to the server
   reading the POST. Target (issue 24): p95 <= 1 s.
2. The agent's side, three ways in one run (same machine, same load):
   no URL; a live URL; a black-holed URL (a socket that accepts connections
   and never answers). Measured on the real ``ars hook claude-code`` process
   holding a call (bypassPermissions ``rm -rf build``): the time from its start
   until its request is in the inbox (what the agent waits for before the
   person can decide), and ``request_approval`` in-process. Target: the
   black-holed row the same as the no-URL row within noise.

Printed as markdown tables, never asserted; the load average is printed.
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from core.api import ARS  # noqa: E402
from core.config import Settings  # noqa: E402
from core.inbox import Inbox  # noqa: E402
from signed_approval import supervise  # noqa: E402

ARS_BIN = Path(sys.executable).parent / "ars"


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(p / 100 * len(s) + 0.5) - 1))] if s else float("nan")


class Receiver:
    def __init__(self):
        self.at: dict[str, float] = {}
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.at[json.loads(body)["id"]] = time.time()
                self.send_response(200)
                self.end_headers()

            def log_message(self, *a):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/ars"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def black_hole() -> tuple[socket.socket, str]:
    """A listening socket nobody accepts from: connects succeed (the backlog), nothing is ever answered."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1024)
    return s, f"http://127.0.0.1:{s.getsockname()[1]}/never"


def delivery(n: int) -> list[float]:
    rec = Receiver()
    os.environ["ARS_NOTIFY_URL"] = rec.url
    out = []
    with tempfile.TemporaryDirectory() as tmp, ARS(Settings(state_dir=Path(tmp) / "s", embedder="off")) as a:
        for i in range(n):
            t = time.time()
            req = a.request_approval("mcp:bench", f"request {i}", f"rm -rf build{i}", risk="high", expires_in=60)
            deadline = time.monotonic() + 15
            while req.id not in rec.at and time.monotonic() < deadline:
                time.sleep(0.002)
            out.append((rec.at.get(req.id, float("nan")) - t) * 1000)
    os.environ.pop("ARS_NOTIFY_URL", None)
    rec.server.shutdown()
    return out


def agent_side(url: str | None, n: int) -> tuple[list[float], list[float]]:
    """(hook start -> request in the inbox, ms; request_approval in-process, ms)."""
    hook_ms, api_ms = [], []
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp) / "s"
        pin = supervise(state)
        project = Path(tmp) / "p"
        project.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ARS_", "CLAUDE_"))}
        if url:
            env["ARS_NOTIFY_URL"] = url
        cmd = [str(ARS_BIN), "hook", "claude-code", "--state", str(state), "--supervisor", pin]
        inbox = Inbox(state)
        for i in range(n):
            ev = {"session_id": f"bench-{i}", "transcript_path": str(project / "t.jsonl"), "cwd": str(project),
                  "permission_mode": "bypassPermissions", "hook_event_name": "PreToolUse", "tool_name": "Bash",
                  "tool_input": {"command": f"rm -rf build{i}"}, "tool_use_id": f"toolu_{i}"}
            before = {r.id for r in inbox.list()}
            t = time.perf_counter()
            proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, env=env, start_new_session=True)
            proc.stdin.write(json.dumps(ev).encode())
            proc.stdin.close()
            while True:
                names = {p.name[:-5] for p in inbox.dir.glob("req-*.json") if not p.name.endswith("decision.json")} \
                    if inbox.dir.exists() else set()
                if names - before:
                    break
                time.sleep(0.001)
            hook_ms.append((time.perf_counter() - t) * 1000)
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        saved = os.environ.pop("ARS_NOTIFY_URL", None)
        if url:
            os.environ["ARS_NOTIFY_URL"] = url
        with ARS(Settings(state_dir=state, embedder="off")) as a:
            for i in range(n):
                t = time.perf_counter()
                a.request_approval("mcp:bench", f"api {i}", f"rm -rf api{i}")
                api_ms.append((time.perf_counter() - t) * 1000)
        os.environ.pop("ARS_NOTIFY_URL", None)
        if saved:
            os.environ["ARS_NOTIFY_URL"] = saved
    return hook_ms, api_ms


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=30)
    args = ap.parse_args()
    os.environ.pop("ARS_NOTIFY_URL", None)
    d = delivery(args.n)
    print(f"\n{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}\n")
    print("| request created -> webhook POST received | n | p50 ms | p95 ms | max ms | target |")
    print("|---|---|---|---|---|---|")
    print(f"| local HTTP receiver (JSON) | {len(d)} | {statistics.median(d):.0f} | {pct(d, 95):.0f} | "
          f"{max(d):.0f} | p95 <= 1000 |")
    live = Receiver()
    hole, hole_url = black_hole()
    rows = []
    for name, url in (("no URL", None), ("live URL", live.url), ("black-holed URL", hole_url)):
        h, a = agent_side(url, args.n)
        rows.append((name, h, a, os.getloadavg()[0]))
    print("\n| the agent's side | hook start -> request in inbox p50 / p95 ms | request_approval p50 / p95 ms | load |")
    print("|---|---|---|---|")
    for name, h, a, load in rows:
        print(f"| {name} | {statistics.median(h):.0f} / {pct(h, 95):.0f} | {statistics.median(a):.1f} / "
              f"{pct(a, 95):.1f} | {load:.1f} |")
    hole.close()


if __name__ == "__main__":
    main()
