"""Recall over MCP with approvals waiting: ``recall`` latency through a real
``ars mcp`` process with 0 and with N ``request_approval`` calls waiting on the
same server, side by side in one run.

    .venv/bin/python bench/mcp_waiting.py [--transport stdio|http|both] [--waiting 100]
                                          [--calls 200] [--episodes 10000] [--seed 7]

Transports, each its own ``ars mcp`` process over one state directory holding
a seeded synthetic corpus (bench/synthetic.py, ``ars ingest --format episodes``):

* ``stdio``: how an agent starts ``ars mcp`` (``.mcp.json``). One client
  session carries everything: the N waiting calls and the recalls.
* ``http``: ``ars mcp --http`` (streamable HTTP, bearer token): each waiting
  call comes from a client session of its own (N agents on one server), the
  recalls from another.

Phases, one after the other on the same server process:

1. ``0 waiting``: ``--calls`` recalls, one after another (after a warm-up).
2. ``N waiting``: N ``request_approval(wait_s=900)`` calls sent and seen pending
   in the inbox, then the same recalls.
3. the N requests approved through the store (``Inbox.decide`` signed with the
   supervisor's key, what ``ars inbox approve`` does; the server pins that key
   with ``--supervisor``, as ``ars install`` writes it): the time until every
   waiting call has answered ``approved`` (each must, or the run fails).
4. ``0 waiting (after)``: the same recalls again, to show the noise between
   two runs of the same phase.

Latency is wall time of ``call_tool("recall")`` in the client, milliseconds.
Target (issue 20): the ``N waiting`` row the same as ``0 waiting`` within
noise. Printed as a markdown table, never asserted; the 1-minute load average
is printed beside each row (the 2 cores are shared). Not part of the tests.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from core.api import ARS  # noqa: E402
from core.config import Settings  # noqa: E402
from core.inbox import Inbox  # noqa: E402
from synthetic import make_queries, write_corpus  # noqa: E402

TOKEN = "bench-mcp-waiting-0123456789abcdef"
PASSPHRASE = b"the bench supervisor's passphrase"
WAIT_S = 900  # the tool's maximum: the calls wait until the bench decides them
K = 10


def progress(msg: str) -> None:
    print(f"[mcp_waiting] {msg}", file=sys.stderr, flush=True)


def child_env(**extra: str) -> dict[str, str]:
    """This environment without a developer's ARS_* settings (the state dir is
    passed explicitly); no recall daemon, as in the tests."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARS_")}
    env["ARS_RECALL_DAEMON"] = "off"
    env.update(extra)
    return env


def ars(*args: str, state: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "tui.cli.main", *args, "--state", str(state)], cwd=ROOT,
                       env=child_env(), capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"ars {' '.join(args)} failed ({r.returncode}): {r.stderr.strip()}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pct(values: list[float], p: float) -> float:
    """The p-th percentile (nearest rank)."""
    s = sorted(values)
    return s[max(0, min(len(s) - 1, round(p / 100 * len(s) + 0.5) - 1))]


def load1() -> float:
    return os.getloadavg()[0]


@dataclass
class Row:
    transport: str
    phase: str
    ms: list[float]
    load_start: float
    load_end: float


@dataclass
class Decided:
    transport: str
    waiting: int
    sent_s: float  # first call sent -> all N pending in the inbox
    decide_s: float  # the store's N decisions
    answered_s: float  # first decision -> the last waiting call answered
    approved: int


class Transport:
    """Opens MCP client sessions to one ``ars mcp`` process."""

    def __init__(self, name: str, state: Path, tmp: Path, pin: str):
        self.name, self.state, self.tmp = name, state, tmp
        self.args = ["-m", "tui.cli.main", "mcp", "--state", str(state), "--supervisor", pin]
        self.proc: subprocess.Popen | None = None
        self.url = ""

    def start(self) -> None:
        if self.name != "http":
            return  # stdio: the client starts the server
        port = free_port()
        self.url = f"http://127.0.0.1:{port}/mcp"
        self.err = open(self.tmp / "mcp-http.err", "w")
        self.proc = subprocess.Popen([sys.executable, *self.args, "--http", "--port", str(port)],
                                     cwd=ROOT, env=child_env(ARS_MCP_TOKEN=TOKEN),
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.err)
        deadline = time.monotonic() + 60
        while True:
            if self.proc.poll() is not None:
                sys.exit(f"ars mcp --http exited: {(self.tmp / 'mcp-http.err').read_text().strip()}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    sys.exit("ars mcp --http did not listen within 60 s")
                time.sleep(0.1)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.err.close()

    def client(self, exit_stack, name: str):
        """A connected ``mcp.Client`` entered on ``exit_stack`` (an AsyncExitStack)."""
        from mcp import Client, StdioServerParameters
        from mcp_types import Implementation

        info = Implementation(name=name, version="1")
        if self.name == "stdio":
            params = StdioServerParameters(command=sys.executable, args=self.args, cwd=str(ROOT), env=child_env())
            return exit_stack.enter_async_context(Client(params, client_info=info))

        async def http():
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            # no read timeout: a waiting call's response stream is quiet until the decision
            h = await exit_stack.enter_async_context(httpx2.AsyncClient(
                headers={"Authorization": f"Bearer {TOKEN}"}, timeout=httpx2.Timeout(60, read=None)))
            return await exit_stack.enter_async_context(
                Client(streamable_http_client(self.url, http_client=h), client_info=info))

        return http()


async def recalls(c, queries: list[str]) -> list[float]:
    out = []
    for q in queries:
        t0 = time.perf_counter()
        r = await c.call_tool("recall", {"query": q, "k": K})
        out.append((time.perf_counter() - t0) * 1000)
        if r.is_error:
            sys.exit(f"recall {q!r} failed: {r.content[0].text}")
    return out


async def run_transport(name: str, state: Path, tmp: Path, queries: list[str], warm: list[str],
                        n_waiting: int, supervisor) -> tuple[list[Row], Decided]:
    from contextlib import AsyncExitStack

    rows: list[Row] = []
    inbox = Inbox(state)
    t = Transport(name, state, tmp, supervisor.fingerprint)
    t.start()
    try:
        async with AsyncExitStack() as stack:
            c = await t.client(stack, "bench recall")
            await recalls(c, warm)

            async def phase(label: str) -> None:
                progress(f"{name}: {label}: {len(queries)} recalls")
                l0 = load1()
                ms = await recalls(c, queries)
                rows.append(Row(name, label, ms, l0, load1()))

            await phase("0 waiting")

            answers: list = []
            waiting_stack = AsyncExitStack()
            async with waiting_stack:
                if name == "http":  # one session per waiting agent, opened before the clock starts
                    sessions = [await t.client(waiting_stack, f"bench agent {i}") for i in range(n_waiting)]
                else:
                    sessions = [c] * n_waiting

                async def ask(i: int) -> None:
                    r = await sessions[i].call_tool("request_approval", {
                        "action": f"bench step {i}", "details": f"echo step {i}", "wait_s": WAIT_S})
                    answers.append(r)

                async with anyio.create_task_group() as tg:
                    t0 = time.perf_counter()
                    for i in range(n_waiting):
                        tg.start_soon(ask, i)
                    while len(inbox.list("pending")) < n_waiting:
                        if answers:
                            sys.exit(f"a waiting call answered before any decision: {answers[0]}")
                        if time.perf_counter() - t0 > 300:
                            sys.exit(f"only {len(inbox.list('pending'))} of {n_waiting} requests pending after 300 s")
                        await anyio.sleep(0.1)
                    sent_s = time.perf_counter() - t0
                    if answers:
                        sys.exit(f"a waiting call answered before any decision: {answers[0]}")
                    await phase(f"{n_waiting} waiting")
                    if answers:
                        sys.exit(f"a waiting call answered before any decision: {answers[0]}")
                    pending = inbox.list("pending")
                    progress(f"{name}: deciding {len(pending)} requests through the store")
                    t1 = time.perf_counter()

                    def decide_all() -> None:
                        for req in pending:
                            inbox.decide(req.id, "approve", note="bench", by="bench", signer=supervisor,
                                         shown=req)

                    await anyio.to_thread.run_sync(decide_all)
                    decide_s = time.perf_counter() - t1
                    with anyio.fail_after(120):
                        while len(answers) < n_waiting:
                            await anyio.sleep(0.005)
                    answered_s = time.perf_counter() - t1
            approved = sum(1 for r in answers if not r.is_error and r.structured_content["status"] == "approved")
            if approved != n_waiting:
                bad = next(r for r in answers if r.is_error or r.structured_content["status"] != "approved")
                sys.exit(f"{n_waiting - approved} waiting calls did not answer approved, e.g. {bad}")
            await phase("0 waiting (after)")
    finally:
        t.stop()
    return rows, Decided(name, n_waiting, sent_s, decide_s, answered_s, approved)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--transport", choices=["stdio", "http", "both"], default="both")
    ap.add_argument("--waiting", type=int, default=100, help="request_approval calls waiting (default 100)")
    ap.add_argument("--calls", type=int, default=200, help="recalls per phase (default 200)")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--episodes", type=int, default=10_000, help="synthetic corpus size (default 10,000)")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    for flag in ("waiting", "calls", "episodes"):
        if getattr(args, flag) < 1:
            ap.error(f"--{flag} must be at least 1, got {getattr(args, flag)}")

    with tempfile.TemporaryDirectory(prefix="ars-mcp-waiting-") as d:
        tmp = Path(d)
        state = tmp / "state"
        corpus = tmp / "episodes.jsonl"
        progress(f"corpus: {args.episodes:,} synthetic episodes, ingesting")
        write_corpus(corpus, args.episodes, args.seed)
        ars("ingest", "--format", "episodes", str(corpus), state=state)
        with ARS(Settings(state_dir=state)) as a:
            a.supervisor_init(PASSPHRASE)
            supervisor = a.supervisor_unlock(PASSPHRASE)
        queries = make_queries(args.calls, args.seed, corpus, args.episodes)
        warm = make_queries(args.warmup, args.seed + 1000, corpus, args.episodes)
        transports = ["stdio", "http"] if args.transport == "both" else [args.transport]
        rows: list[Row] = []
        decided: list[Decided] = []
        for name in transports:
            r, dd = anyio.run(run_transport, name, state, tmp, queries, warm, args.waiting, supervisor)
            rows += r
            decided.append(dd)

    print(f"## recall over MCP with approvals waiting ({args.episodes:,} episodes, k={K}, "
          f"{args.calls} recalls per row, {os.cpu_count()} CPUs)")
    print()
    print("| transport | approvals waiting | p50 ms | p95 ms | max ms | mean ms | load 1m start/end |")
    print("|---|---|---:|---:|---:|---:|---|")
    for r in rows:
        print(f"| {r.transport} | {r.phase} | {statistics.median(r.ms):.1f} | {pct(r.ms, 95):.1f} | "
              f"{max(r.ms):.1f} | {statistics.fmean(r.ms):.1f} | {r.load_start:.2f}/{r.load_end:.2f} |")
    print()
    print("| transport | waiting calls | all pending after s | store decided all in s "
          "| last answer after first decision s | answered approved |")
    print("|---|---:|---:|---:|---:|---:|")
    for d in decided:
        print(f"| {d.transport} | {d.waiting} | {d.sent_s:.2f} | {d.decide_s:.2f} | {d.answered_s:.2f} | "
              f"{d.approved}/{d.waiting} |")
    print()
    print("target (issue 20): the 'N waiting' rows the same as '0 waiting' within noise "
          "(the two '0 waiting' rows show the noise)")


if __name__ == "__main__":
    main()
