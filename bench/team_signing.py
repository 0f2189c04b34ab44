"""What signing the team's memories costs: ingest, push, pull and Neo4j recall,
before (a baseline commit, unsigned) and after (this tree: batches signed by
the host key, pulls and graph answers checked), in the same run.

    python bench/team_signing.py [--episodes 5000] [--trials 2] [--baseline REV] [--neo4j-uri URI]

Each trial, for each tree (alternating, so a busy moment of the shared CPU
does not land on one side only): the graph is cleared; host A ingests its
corpus with no sync (ledger + SQLite), then pushes it (``sync.run``);
host B, empty, pulls it (``sync.run``: its first pull reads every
episode of A); then B asks Neo4j 100 queries (recall ``tiers=neo4j``, k=10,
after 10 warm-up queries). Each tree runs in its own process with its own
``PYTHONPATH`` (the baseline is ``git archive REV`` into a temporary folder),
on the same Neo4j, with the same synthetic corpus (bench/synthetic.py).

Printed: a table of the median over trials per tree, with the 1-minute load
average at the start and end of the run (the CPU is shared: a figure measured
beside other work is a floor).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import io
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "bench"))

QUERIES = 100


def child(tree: str, state: str, uri: str, corpus: str, queries: str) -> None:
    """One trial in one tree (run as a separate process with PYTHONPATH=tree): prints a JSON line."""
    from core.config import Settings
    from core.ingest.pipeline import ingest
    from core.memory.memory import Memory

    def mem(name: str) -> Memory:
        d = Path(state) / name
        d.mkdir(parents=True, exist_ok=True)
        return Memory(Settings(state_dir=d, neo4j_uri=uri, namespace="bench", host_id=name, embedder="off",
                               recall_daemon="off", neo4j_deadline=10.0, sqlite_deadline=10.0))

    out: dict = {}
    spent = _timers()
    a = mem("host-a")
    try:
        t = time.perf_counter()
        ingest(a, [Path(corpus)], fmt="episodes", sync=False)
        out["ingest_s"] = time.perf_counter() - t
        t = time.perf_counter()
        r = a.sync.run(max_seconds=1800)
        out["push_s"] = time.perf_counter() - t
        assert r.ok, r.error
        out["pushed"] = r.applied
    finally:
        a.close()
    b = mem("host-b")
    try:
        t = time.perf_counter()
        r = b.sync.run(max_seconds=1800)
        out["pull_s"] = time.perf_counter() - t
        assert r.ok, r.error
        out["pulled"] = r.pulled
        qs = json.loads(Path(queries).read_text())
        for q in qs[:10]:
            b.recall(q, k=10, tiers="neo4j")
        lat, hits = [], 0
        for q in qs[:QUERIES]:
            t = time.perf_counter()
            res = b.recall(q, k=10, tiers="neo4j")
            lat.append((time.perf_counter() - t) * 1000)
            hits += len(res.hits)
        lat.sort()
        out["recall_p50"] = statistics.median(lat)
        out["recall_p95"] = lat[int(0.95 * (len(lat) - 1))]
        out["recall_hits"] = hits
    finally:
        b.close()
    out.update(spent)
    print("RESULT " + json.dumps(out), flush=True)


def _timers() -> dict:
    """Where the signed tree spends its time on signatures (its own functions, timed
    in place; the baseline has none): signing and digests at the push, checking at
    the pull, the digests recall compares. Load on the shared CPU moves the totals
    above; these are the part signing adds."""
    spent: dict = {}
    try:
        from core.consumers import team_pull
        from core.memory.stores import Stores
        from core.memory.tiers.neo4j.search import Neo4jSearch
        from core.memory.tiers.neo4j.write import Neo4jWrites
    except ImportError:
        return spent
    if not hasattr(Neo4jWrites, "_sign"):
        return spent

    def timed(owner, name: str, key: str) -> None:
        fn = getattr(owner, name)

        def wrapper(*a, **kw):
            t = time.perf_counter()
            try:
                return fn(*a, **kw)
            finally:
                spent[key] = spent.get(key, 0.0) + time.perf_counter() - t
        setattr(owner, name, wrapper)

    timed(Neo4jWrites, "_sign", "sign_s")
    timed(Stores, "_record_digests", "record_s")
    timed(team_pull._Check, "rows", "verify_s")
    timed(Neo4jSearch, "_vouched", "vouch_s")
    return spent


def baseline_tree(rev: str, into: Path) -> Path:
    """``git archive rev`` unpacked into ``into`` (with this tree's Neo4j jars linked in)."""
    data = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(into)
    lib = into / "scripts" / "neo4j" / "lib"
    if not lib.exists() and (ROOT / "scripts" / "neo4j" / "lib").exists():
        lib.symlink_to((ROOT / "scripts" / "neo4j" / "lib").resolve())
    return into


def run_child(tree: Path, state: Path, uri: str, corpus: Path, queries: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    p = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", str(tree), str(state), uri,
                        str(corpus), str(queries)], env=env, cwd=str(tree), capture_output=True, text=True)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"child in {tree} failed: {p.stderr[-2000:]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child", nargs=5, metavar=("TREE", "STATE", "URI", "CORPUS", "QUERIES"))
    ap.add_argument("--episodes", type=int, default=5000)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1, help="runs of each tree first, not counted (a cold JVM)")
    ap.add_argument("--baseline", default=None,
                    help="the commit to compare with (default: where this branch left main)")
    ap.add_argument("--neo4j-uri", default=None)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return

    from synthetic import make_queries, write_corpus

    load0 = os.getloadavg()[0]
    base_rev = args.baseline or subprocess.run(["git", "-C", str(ROOT), "merge-base", "HEAD", "main"], check=True,
                                               capture_output=True, text=True).stdout.strip()
    rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", base_rev], check=True,
                         capture_output=True, text=True).stdout.strip()
    server = None
    uri = args.neo4j_uri
    if uri is None:
        from neo4j_server import Neo4jServer

        server = Neo4jServer()
        uri = server.start()
    sys.path.insert(0, str(ROOT))
    from core.memory.tiers.neo4j import Neo4jStore

    admin = Neo4jStore(uri)
    results: dict[str, list[dict]] = {"before": [], "after": []}
    try:
        with tempfile.TemporaryDirectory(prefix="ars-signing-") as tmp:
            base = Path(tmp)
            corpus, queries = base / "corpus.jsonl", base / "queries.json"
            write_corpus(corpus, args.episodes, seed=args.seed)
            queries.write_text(json.dumps(make_queries(QUERIES + 10, seed=args.seed, corpus=corpus)))
            trees = {"before": baseline_tree(rev, base / "baseline"), "after": ROOT}
            for trial in range(-args.warmup, args.trials):
                order = ["before", "after"] if trial % 2 == 0 else ["after", "before"]
                for name in order:
                    admin.clear()
                    r = run_child(trees[name], base / f"{name}-{trial}", uri, corpus, queries)
                    if trial >= 0:
                        results[name].append(r)
                    print(f"trial {trial} {name}: {json.dumps(r)}", file=sys.stderr, flush=True)
    finally:
        admin.close()
        if server is not None:
            server.close()
    load1 = os.getloadavg()[0]
    n = args.episodes

    def med(name: str, key: str) -> float:
        return statistics.median(r[key] for r in results[name])

    print(f"\nTeam signing, {n:,} episodes, {args.trials} trials (median), {os.cpu_count()} CPUs, "
          f"load {load0:.1f} -> {load1:.1f}; before = {rev} (unsigned), after = this tree (signed, checked)\n")
    print("| | ingest eps/s | push eps/s | pull eps/s | neo4j recall p50 ms | p95 ms | hits (100 queries) |")
    print("|---|---|---|---|---|---|---|")
    for name in ("before", "after"):
        print(f"| {name} | {n / med(name, 'ingest_s'):,.0f} | {n / med(name, 'push_s'):,.0f} | "
              f"{med(name, 'pulled') / med(name, 'pull_s'):,.0f} | {med(name, 'recall_p50'):.1f} | "
              f"{med(name, 'recall_p95'):.1f} | {med(name, 'recall_hits'):.0f} |")
    if all("sign_s" in r for r in results["after"]):
        print("\nOf the signed tree's time (median): what signing adds, timed in place\n")
        print("| step | total s | per episode µs | share of the step |")
        print("|---|---|---|---|")
        for key, step, whole, per in (("sign_s", "push: digests + one signature per batch", "push_s", n),
                                      ("record_s", "push: the digests kept in SQLite (recall's check)", "push_s", n),
                                      ("verify_s", "pull: batches read + verified, digests", "pull_s", n),
                                      ("vouch_s", "recall: digests of the graph's answers + SQLite check",
                                       None, QUERIES)):
            t = med("after", key) if all(key in r for r in results["after"]) else 0.0
            share = f"{100 * t / med('after', whole):.1f} %" if whole else f"{1000 * t / per:.2f} ms a query"
            print(f"| {step} | {t:.3f} | {1e6 * t / n:,.0f} | {share} |")


if __name__ == "__main__":
    main()
