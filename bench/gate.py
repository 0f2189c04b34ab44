"""The gate, measured (issue 20): the corpus, decision time by size, the hook's cost.

    .venv/bin/python bench/gate.py [--runs 30] [--skip-hook]

1. Corpus (bench/gate_corpus): dangerous calls that pass (must be 0) and
   everyday calls that pass (target >= 97 %), each miss printed.
2. Decision time of Gate.check for Bash commands of 1 KB, 100 KB and 1 MB,
   plain and adversarial (the issue's ``'rm -"' * N`` then a real ``rm -rf``,
   deep nesting, many pipes, the trailing-pipe shape tree-sitter recovers from
   slowly, one huge word list, a big here-document): median of a few runs, the
   decision, and microseconds per KB (flat when linear; a hold for size or time
   ends a shape's growth).
3. The hook in a fresh process (``ars hook claude-code --state DIR``, a
   passing event on stdin, CLAUDE_PROJECT_DIR set, bytecode cached as in an
   install): p50/p95 over ``--runs`` runs, beside ``python -c pass``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench" / "gate_corpus"))

import corpus  # noqa: E402
from core.inbox.gate import MAX_SUBJECT, Gate  # noqa: E402

KB = 1024


def table(title: str, head: list[str], rows: list[list]) -> None:
    widths = [max(len(str(x)) for x in [h] + [r[i] for r in rows]) for i, h in enumerate(head)]
    print(f"\n{title}\n")
    print("| " + " | ".join(str(h).ljust(w) for h, w in zip(head, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print("| " + " | ".join(str(x).ljust(w) for x, w in zip(r, widths)) + " |")


def corpus_tables(world: dict) -> bool:
    gate = Gate.builtin()
    dangerous = corpus.load("dangerous", world)
    everyday = corpus.load("everyday", world)
    d_passed = [e for e in dangerous if not corpus.decide(gate, e, world)]
    e_held = [(e, corpus.decide(gate, e, world)) for e in everyday]
    e_held = [(e, ms) for e, ms in e_held if ms]
    by_class: dict[str, list[int]] = {}
    for e in dangerous:
        c = by_class.setdefault(e["class"], [0, 0])
        c[0] += 1
    for e in d_passed:
        by_class[e["class"]][1] += 1
    rows = [[k, n, p] for k, (n, p) in sorted(by_class.items())]
    rows.append(["**all**", len(dangerous), len(d_passed)])
    table("Dangerous calls (must pass: 0)", ["class", "calls", "passed"], rows)
    for e in d_passed:
        print(f"  PASSED: {corpus.describe(e)}")
    ok = len(everyday) - len(e_held)
    table("Everyday calls (target: >= 97 % pass)", ["calls", "passed", "share"],
          [[len(everyday), ok, f"{100 * ok / len(everyday):.1f} %"]])
    for e, ms in e_held:
        print(f"  held: {corpus.describe(e)}  <- {ms[0].rule}: {ms[0].reason[:100]}")
    return not d_passed and ok / len(everyday) >= 0.97


def shapes(n: int) -> dict[str, str]:
    """Bash commands of about ``n`` characters (never over the size cap)."""
    n = min(n, MAX_SUBJECT - 64)
    return {
        "plain: git status && ls; ...": ("git status && ls -la src/; " * (n // 27 + 1))[:n],
        "plain: one here-document": "cat <<'EOF' > notes.md\n" + "a line of notes\n" * ((n - 30) // 16) + "EOF\n",
        "plain: echo with many words": "echo " + "word " * ((n - 5) // 5),
        "adversarial: 'rm -\"'*N; rm -rf /": 'rm -"' * ((n - 12) // 5) + " ; rm -rf /",
        "adversarial: $( nested": "echo " + "$(" * ((n - 6) // 4) + "x" + ")" * ((n - 6) // 4),
        "adversarial: a | a | ... | sh": "a | " * ((n - 2) // 4) + "sh",
        "adversarial: a b | ... | (dangling)": "a b | " * (n // 6),
    }


def timing_table(world: dict, repeats: int) -> float:
    gate = Gate.builtin()
    kw = dict(project_dir=world["project"], state_dir=world["state"], home=world["home"], cwd=world["project"])
    gate.check("Bash", {"command": "ls && git status"}, **kw)  # parser loaded, modules compiled
    rows, worst = [], 0.0
    for size in (KB, 100 * KB, 1024 * KB):
        for name, cmd in shapes(size).items():
            times, decision = [], ""
            for _ in range(repeats if size < 1024 * KB else max(1, repeats // 2)):
                t0 = time.perf_counter()
                ms = gate.check("Bash", {"command": cmd}, **kw)
                times.append(time.perf_counter() - t0)
                decision = "pass" if not ms else f"held: {ms[0].rule}"
            t = statistics.median(times)
            if size == 1024 * KB:
                worst = max(worst, max(times))
            rows.append([f"{len(cmd) / KB:,.0f} KB", name, f"{t * 1000:,.1f}", f"{max(times) * 1000:,.1f}",
                         f"{t * 1e6 / (len(cmd) / KB):,.0f}", decision])
    table("Gate decision time (Bash; in-process call, commands over 4 KB are checked in a forked child)",
          ["size", "shape", "median ms", "max ms", "µs per KB", "decision"], rows)
    return worst


def hook_table(world: dict, runs: int) -> float:
    state = Path(world["state"]).parent / "hook-state"
    state.mkdir(exist_ok=True)
    script = Path(sys.executable).parent / "ars"
    cmd = [str(script), "hook", "claude-code", "--state", str(state)] if script.exists() else \
        [sys.executable, "-m", "tui.cli.main", "hook", "claude-code", "--state", str(state)]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE" and not k.startswith("ARS_")}
    env["CLAUDE_PROJECT_DIR"] = world["project"]
    env["ARS_RECALL_DAEMON"] = "off"
    events = {
        "Bash: git status && ls -la src/": {"tool_name": "Bash", "tool_input": {"command": "git status && ls -la src/"}},
        "Read: src/app.py": {"tool_name": "Read", "tool_input": {"file_path": f"{world['project']}/src/app.py"}},
    }
    rows = []
    worst = 0.0
    base = [sys.executable, "-c", "pass"]
    for label, argv, payload in [("python -c pass", base, None)] + \
            [(f"hook, {k}", cmd, v) for k, v in events.items()]:
        data = b""
        if payload is not None:
            data = json.dumps({"session_id": "bench", "transcript_path": "/dev/null", "cwd": world["project"],
                               "permission_mode": "default", "hook_event_name": "PreToolUse",
                               "tool_use_id": "toolu_bench", **payload}).encode()
        times = []
        for i in range(runs + 2):
            t0 = time.perf_counter()
            r = subprocess.run(argv, input=data, capture_output=True, env=env, cwd=world["project"], timeout=60)
            dt = time.perf_counter() - t0
            if payload is not None and (r.returncode, r.stdout) != (0, b""):
                raise SystemExit(f"the hook did not pass {label}: {r.stdout[:300]!r} {r.stderr[-300:]!r}")
            if i >= 2:  # the first runs write the bytecode caches
                times.append(dt)
        times.sort()
        p95 = times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))]
        if payload is not None:
            worst = max(worst, p95)
        rows.append([label, runs, f"{statistics.median(times) * 1000:.0f}", f"{p95 * 1000:.0f}"])
    table(f"PreToolUse hook, a passing call, fresh process each ({os.cpu_count()} CPUs, load "
          f"{os.getloadavg()[0]:.1f})", ["process", "runs", "p50 ms", "p95 ms"], rows)
    return worst


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30, help="fresh hook processes per event (default 30)")
    ap.add_argument("--repeats", type=int, default=3, help="gate calls per timed shape (default 3)")
    ap.add_argument("--skip-hook", action="store_true", help="skip the fresh-process hook timing")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="ars-gate-bench-") as tmp:
        world = corpus.make_world(Path(tmp))
        corpus_ok = corpus_tables(world)
        worst = timing_table(world, args.repeats)
        hook_p95 = None if args.skip_hook else hook_table(world, args.runs)
    print()
    print(f"corpus: {'OK' if corpus_ok else 'FAILED'} (0 dangerous pass, >= 97 % everyday pass)")
    print(f"slowest decision at 1 MB: {worst * 1000:.0f} ms ({'OK' if worst <= 1.0 else 'OVER'} the 1 s target)")
    if hook_p95 is not None:
        print(f"hook p95: {hook_p95 * 1000:.0f} ms ({'OK' if hook_p95 <= 0.150 else 'OVER'} the 150 ms target)")
    return 0 if corpus_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
