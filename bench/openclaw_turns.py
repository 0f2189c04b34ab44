"""OpenClaw turns: what ARS's memory adds to each OpenClaw turn (the ars-gate plugin's
``before_prompt_build``), what capturing a turn costs (``agent_end``), idle and beside
two busy loops.

    python bench/openclaw_turns.py [--episodes 2000] [--turns 200]

The plugin's own code (tui/agents/openclaw_plugin/) runs under Node 24 (.agents/bin/node)
in the minimal host (tests/agents_stub/openclaw_plugin_host.mjs) that calls its
``register(api)`` as OpenClaw does and one hook handler at a time; the time is the
handler's, from its call to its answer: the request to the long-lived ``ars hook openclaw
--serve``, ``ARS.context`` there (recall, the block, the receipt), the answer. A synthetic
corpus (bench/synthetic.py) is ingested first; the prompts are make_queries' (a third
about an ingested episode, the rest matching little or nothing), a new session every
tenth turn. Rows:

* the turn's recall through the plugin (the added time per turn; target p95 <= 50 ms);
* of which in core: ``ARS.context``'s own latency_ms, and the serve process's round trip
  from a Python client on the same pipe protocol;
* baseline, in the same run: what the plugin did before, once per session: a fresh
  ``ars hook openclaw`` process answering ``session_start`` (the startup context);
* capture: the plugin's ``agent_end`` handler (it returns once ``ARS.capture_turn`` made the
  turn durable) and turn end -> recallable (a unique word of the turn found by recall).

Rows needing core's ``ARS.context`` / ``ARS.capture_turn`` say so when this tree has none.
Targets are printed, never asserted. Tables to stdout and bench/out/openclaw_turns.txt.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from recall_latency import BusyLoops, Out, ars_command, loadavg, ms, pct, progress  # noqa: E402
from synthetic import make_queries, write_corpus  # noqa: E402

TARGET_TURN_P95 = 50.0      # ms added to a turn by the plugin's recall
TARGET_CAPTURE_P95 = 1000.0  # ms from the turn's end to recallable
NODE = ROOT / ".agents" / "bin" / "node"
HOST = ROOT / "tests" / "agents_stub" / "openclaw_plugin_host.mjs"
PLUGIN = ROOT / "tui" / "agents" / "openclaw_plugin"


def env_clean() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.upper().startswith(("ARS_", "OPENCLAW_"))}


class Host:
    """The plugin under its minimal host; ``hook()`` runs one handler and waits for it."""

    def __init__(self, config: dict, cwd: Path):
        self.proc = subprocess.Popen([str(NODE), str(HOST), str(PLUGIN), json.dumps(config)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
                                     env=env_clean())
        self.n = 0
        ready = json.loads(self.proc.stdout.readline())
        assert ready.get("ready"), ready

    def hook(self, name: str, event: dict, ctx: dict) -> dict:
        self.n += 1
        self.proc.stdin.write(json.dumps({"n": self.n, "hook": name, "event": event, "ctx": ctx},
                                         ensure_ascii=False) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the plugin host ended: {self.proc.stderr.read()[-2000:]}")
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError(answer["error"])
        return answer

    def close(self) -> list[str]:
        self.proc.stdin.close()
        logs: list[str] = []
        for line in self.proc.stdout:
            got = json.loads(line)
            logs = got.get("logs", logs)
        self.proc.wait(30)
        return logs


class Serve:
    """``ars hook openclaw --serve`` driven directly: the pipe protocol without Node."""

    def __init__(self, ars: list[str], state: Path):
        self.proc = subprocess.Popen([*ars, "hook", "openclaw", "--state", str(state), "--serve"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env_clean())
        self.n = 0
        while json.loads(self.proc.stdout.readline()).get("ready") is not True:
            pass

    def ask(self, payload: dict) -> tuple[float, dict]:
        self.n += 1
        t0 = time.perf_counter()
        self.proc.stdin.write(json.dumps({**payload, "id": self.n}, ensure_ascii=False) + "\n")
        self.proc.stdin.flush()
        while True:
            answer = json.loads(self.proc.stdout.readline())
            if answer.get("id") == self.n:
                return (time.perf_counter() - t0) * 1000, answer

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(60)


def has(name: str) -> bool:
    from core.api import ARS

    return hasattr(ARS, name)


def turns(host: Host, prompts: list[str], tag: str) -> tuple[list[float], list[float], int]:
    """The plugin's before_prompt_build per prompt (ms), the same for a session's first turns
    (which also ask for the startup context), and how many injected something."""
    out, firsts, injected = [], [], 0
    session = ""
    previous = ""
    for i, prompt in enumerate(prompts):
        if i % 10 == 0:
            session = f"{tag}-{i}"
        event = {"prompt": prompt, "currentUserMessage": prompt,
                 "messages": [{"role": "assistant", "content": [{"type": "text", "text": previous}]}] if previous else []}
        a = host.hook("before_prompt_build", event, {"sessionId": session, "runId": f"{tag}-run-{i}", "trigger": "user"})
        out.append(a["ms"])
        if i % 10 == 0:
            firsts.append(a["ms"])
        injected += bool(a.get("result"))
        previous = f"Looked into {prompt[:40]}."
    return out, firsts, injected


def direct(serve: Serve, prompts: list[str], tag: str) -> tuple[list[float], list[float]]:
    """(round trip ms, core's latency_ms) of the same context requests the plugin makes (the
    prompt, the turn before, a new session every tenth), straight to the serve process."""
    wall, core = [], []
    previous = ""
    for i, prompt in enumerate(prompts):
        t, a = serve.ask({"op": "context", "prompt": prompt, "previous": previous, "session": f"{tag}-{i // 10}",
                          "timeout_ms": 5000})
        wall.append(t)
        core.append(float(a.get("latency_ms") or 0.0))
        previous = f"Looked into {prompt[:40]}."
    return wall, core


def oneshot(ars: list[str], state: Path, n: int, cwd: Path) -> list[float]:
    """The baseline: a fresh ``ars hook openclaw`` answering session_start, as the plugin did per session."""
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        p = subprocess.run([*ars, "hook", "openclaw", "--state", str(state)], input=json.dumps(
            {"event": "session_start", "cwd": str(cwd)}), capture_output=True, text=True, env=env_clean(), cwd=cwd)
        out.append((time.perf_counter() - t0) * 1000)
        assert "context" in json.loads(p.stdout), p.stdout + p.stderr
    return out


def captures(host: Host, serve: Serve, n: int, tag: str) -> tuple[list[float], list[float], int]:
    """(agent_end handler ms, turn end -> recallable ms, not found) for ``n`` turns, each with a unique word."""
    handler, recallable, missed = [], [], 0
    for i in range(n):
        word = f"zq{uuid.uuid4().hex[:10]}"
        messages = [{"role": "user", "content": f"check the {word} job", "timestamp": int(time.time() * 1000)},
                    {"role": "assistant", "content": [{"type": "toolCall", "id": "c1", "name": "exec",
                                                       "arguments": {"command": f"./run {word}"}}]},
                    {"role": "toolResult", "toolCallId": "c1", "toolName": "exec", "isError": False,
                     "content": [{"type": "text", "text": f"{word}: 12 rows written"}], "details": {"exitCode": 0}},
                    {"role": "assistant", "content": [{"type": "text", "text": f"The {word} job wrote 12 rows."}]}]
        t0 = time.perf_counter()
        a = host.hook("agent_end", {"runId": f"{tag}-{i}", "success": True, "messages": messages},
                      {"sessionId": f"{tag}-cap", "runId": f"{tag}-{i}", "agentId": "main"})
        handler.append(a["ms"])
        found = False
        while (time.perf_counter() - t0) < 5.0:
            _, got = serve.ask({"op": "search", "query": word, "k": 1})
            if word in got.get("text", ""):
                found = True
                break
        if found:
            recallable.append((time.perf_counter() - t0) * 1000)
        else:
            missed += 1
    return handler, recallable, missed


def row(out: Out, what: str, values: list[float], target: float | None = None, note: str = "") -> None:
    if not values:
        out(f"| {what} | 0 | – | – | – | {note} |")
        return
    p95 = pct(values, 95)
    verdict = f"p95 <= {target:g} ({'met' if p95 <= target else 'MISSED'})" if target else ""
    out(f"| {what} | {len(values)} | {ms(pct(values, 50))} | {ms(p95)} | {ms(max(values))} | "
        f"{'; '.join(x for x in (verdict, note) if x)} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--episodes", type=int, default=2000)
    ap.add_argument("--turns", type=int, default=200)
    ap.add_argument("--oneshot", type=int, default=20, help="fresh-process session_start calls (the baseline)")
    ap.add_argument("--captures", type=int, default=40)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "openclaw_turns.txt")
    args = ap.parse_args()
    if not NODE.exists():
        sys.exit(f"no Node at {NODE}: run scripts/agents/install-openclaw first")
    out = Out(args.out)
    ars = ars_command()
    tmp = Path(tempfile.mkdtemp(prefix="ars-bench-openclaw-turns-"))
    try:
        state, project = tmp / "state", tmp / "project"
        project.mkdir()
        corpus = tmp / "episodes.jsonl"
        progress(f"corpus: {args.episodes} synthetic episodes, ingested")
        write_corpus(corpus, args.episodes, seed=7)
        r = subprocess.run([*ars, "ingest", str(corpus), "--state", str(state)], capture_output=True, text=True,
                           env=env_clean())
        assert r.returncode == 0, r.stderr
        prompts = make_queries(args.turns, seed=11, corpus=corpus)

        host = Host({"ars": ars, "state": str(state), "project": str(project)}, project)
        time.sleep(2.0)  # OpenClaw loads plugins seconds before the first prompt is built
        first = host.hook("before_prompt_build", {"prompt": "hello", "messages": []}, {"sessionId": "first"})["ms"]
        serve = Serve(ars, state)
        rows: dict[str, dict] = {}
        for load in ("idle", "two busy loops"):
            progress(f"{load}: {args.turns} turns through the plugin, then straight to the serve process")
            with BusyLoops(2 if load != "idle" else 0):
                plug, firsts, injected = turns(host, prompts, load.replace(" ", "-"))
                wall, core = direct(serve, prompts, load.replace(" ", "-") + "-direct")
                base = oneshot(ars, state, args.oneshot, project)
                cap = captures(host, serve, args.captures, load.replace(" ", "-")) if has("capture_turn") else None
            rows[load] = {"plug": plug, "firsts": firsts, "injected": injected, "wall": wall, "core": core, "base": base, "cap": cap,
                          "la": loadavg()}
        serve.close()
        logs = host.close()

        out(f"# OpenClaw turns: ARS's memory per turn ({args.episodes} episodes, {args.turns} prompts, "
            f"{os.cpu_count()} CPUs)")
        out()
        if not has("context"):
            out("_This tree's core has no ARS.context yet: the recall rows time the plugin's path to an answer "
                "that injects nothing (core's per-turn context is built on another branch)._")
            out()
        out("| what | n | p50 ms | p95 ms | max ms | target / note |")
        out("|---|---|---|---|---|---|")
        for load, r in rows.items():
            row(out, f"{load}: a turn's recall, plugin before_prompt_build (added per turn)", r["plug"],
                TARGET_TURN_P95, f"{r['injected']} of {len(r['plug'])} injected; load {r['la']}")
            row(out, f"{load}: of those, a session's first turn (also the startup context)", r["firsts"])
            row(out, f"{load}: of which core ARS.context (its latency_ms)", r["core"])
            row(out, f"{load}: serve round trip from Python (no Node)", r["wall"])
            row(out, f"{load}: baseline, before: a fresh `ars hook openclaw` session_start per session", r["base"])
            if r["cap"] is None:
                out(f"| {load}: capture (agent_end) | – | – | – | – | no ARS.capture_turn in this tree |")
            else:
                handler, recallable, missed = r["cap"]
                row(out, f"{load}: capture, plugin agent_end (durable when it returns)", handler)
                row(out, f"{load}: turn end -> recallable", recallable, TARGET_CAPTURE_P95,
                    f"{missed} not found within 5 s" if missed else "")
        out(f"| first turn, 2 s after the plugin loaded (the serve process started at load) | 1 | {ms(first)} | | | |")
        warned = [x for x in logs if "recall" in x or "capture" in x]
        if warned:
            out()
            out(f"plugin log lines about memory: {len(warned)}, e.g. {warned[0][:200]}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
