"""FTS5's merge settings and secure-delete, measured on the SQLite tier.

Each row ingests the same synthetic corpus (bench/synthetic.py) into a fresh
state directory with one FTS5 setting changed, then times the SQLite tier's
recall (a warm process, production deadline) and ``ars forget`` of single
episodes (in-process, the same code the CLI runs). Settings (SQLite's FTS5
documentation, "FTS5 Options"):

* ``automerge`` (default 4): how many segments of one level are merged at once
  while writing. Higher: less merge work at ingest, more segments per query.
* ``crisismerge`` (default 16): segments of one level that force a merge.
* ``secure-delete`` (what ``ars forget`` turns on for its own transaction):
  the deleted postings are removed at once, against ``optimize`` (a merge of
  the whole index) that a plain delete needs to leave no trace.

    .venv/bin/python bench/fts_settings.py --episodes 100000
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

CONFIGS = [  # label, FTS5 options set before the ingest
    ("default (automerge 4, crisismerge 16)", {}),
    ("automerge 8", {"automerge": 8}),
    ("automerge 16", {"automerge": 16}),
    ("crisismerge 64", {"crisismerge": 64}),
    ("default; forget merges (no secure-delete)", {"_merge_on_forget": True}),
]


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


FTS_SECURE = None  # what this SQLite offers (core/infra/sqlite_lib.py), set by main


def run(label: str, options: dict, corpus: Path, queries: list[str], work: Path, forgets: int) -> list[str]:
    from core.config import Settings
    from core.govern import forget as F
    from core.ingest.pipeline import ingest
    from core.memory.memory import Memory

    state = work / "state"
    shutil.rmtree(state, ignore_errors=True)
    mem = Memory(Settings(state_dir=state, embedder="off"))
    from core.memory.tiers.sqlite import write as sqlite_write

    sqlite_write.FTS_SECURE_DELETE = FTS_SECURE and not options.pop("_merge_on_forget", False)
    conn = mem.sqlite._conn()
    for key, value in options.items():
        with conn:
            conn.execute("INSERT INTO episodes_fts(episodes_fts, rank) VALUES (?, ?)", (key, value))
    t0 = time.perf_counter()
    rep = ingest(mem, [corpus], fmt="episodes", sync=False)
    ingest_s = time.perf_counter() - t0
    segments = conn.execute("SELECT count(*) FROM episodes_fts_data WHERE id > 10").fetchone()[0]
    size = sum(p.stat().st_size for p in state.glob("memory.sqlite*")) / 2**20
    mem.close()
    mem = Memory(Settings(state_dir=state, embedder="off"))
    for q in queries[:10]:
        mem.recall(q, k=10, tiers="sqlite")
    lat = []
    for q in queries:
        t = time.perf_counter()
        mem.recall(q, k=10, tiers="sqlite")
        lat.append((time.perf_counter() - t) * 1000)
    ids = mem.sqlite.ids()
    times = []
    for j in range(forgets):
        t = time.perf_counter()
        F.forget(mem, F.select(mem, ids=[ids[(1000 + 7919 * j) % len(ids)]]), why="bench")
        times.append(time.perf_counter() - t)
    mem.close()
    return [label, f"{rep.episodes_added / ingest_s:,.0f}", f"{size:,.0f}", f"{segments:,}",
            f"{pct(lat, 50):.1f} / {pct(lat, 95):.1f}", f"{pct(times, 50):.2f} / {max(times):.2f}"]


def main() -> None:
    from core.infra.sqlite_lib import FTS_SECURE_DELETE, sqlite3
    from synthetic import make_queries, write_corpus

    global FTS_SECURE
    FTS_SECURE = FTS_SECURE_DELETE
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--episodes", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--forgets", type=int, default=5)
    ap.add_argument("--workdir", default=None)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ars-fts-", dir=args.workdir))
    try:
        corpus = work / "corpus.jsonl"
        write_corpus(corpus, args.episodes, seed=7)
        queries = make_queries(args.queries, seed=7, corpus=corpus)
        print(f"# bench/fts_settings.py — {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores, "
              f"load {os.getloadavg()[0]:.2f}, {args.episodes:,} episodes, SQLite {sqlite3.sqlite_version}, "
              f"FTS5 secure-delete {'on for forget' if FTS_SECURE_DELETE else 'unavailable: forget merges'}\n")
        rows = [run(label, dict(opts), corpus, queries, work, args.forgets) for label, opts in CONFIGS]
        head = ["FTS5 setting", "ingest (episodes/s)", "memory.sqlite (MB)", "FTS segments' pages",
                "sqlite tier p50 / p95 (ms)", "forget p50 / max (s)"]
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for r in rows:
            print("| " + " | ".join(r) + " |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
