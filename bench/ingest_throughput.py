"""Ingestion throughput, durable, and the Neo4j outage catch-up.

    python bench/ingest_throughput.py [--messages 100000] [--claude-mb 50] [--repeats 3] [--neo4j-uri URI]

Tables:
1. messages/s into ledger + SQLite (acknowledged: one fsync per batch) and
   episodes/s synced to Neo4j, on a synthetic 100k-message corpus (generic
   JSONL) and on the real Claude Code transcripts repeated to >= 50 MB; next
   to the article's write path in the same run (per episode: SQLite commit,
   then a Neo4j MERGE, no ledger), measured on a slice and given as a rate.
2. Neo4j outage: ingest in ten chunks, kill Neo4j after the third, keep
   ingesting, start it again, ``sync run``: drift, lost, catch-up time.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "bench"))

from core.config import Settings  # noqa: E402
from core.ingest.parsers import PARSERS  # noqa: E402
from core.ingest.pipeline import ingest  # noqa: E402
from core.memory.memory import Memory  # noqa: E402

TRANSCRIPTS = ROOT.parent / "shared" / "data" / "transcripts" / "claude-code"


def synthetic_messages(path: Path, n_messages: int, seed: int = 7) -> int:
    """Generic JSONL: synthetic episodes cut into messages of one session each."""
    from synthetic import generate

    n = 0
    with open(path, "w", encoding="utf-8") as fh:
        for ep in generate(max(1, n_messages // 4), seed=seed):
            text = ep["text"]
            parts = [text[i : i + max(1, len(text) // 4)] for i in range(0, len(text), max(1, len(text) // 4))][:4]
            for j, part in enumerate(parts):
                fh.write(json.dumps({"role": "user" if j % 2 == 0 else "assistant", "content": part,
                                     "session_id": ep["id"].replace(":", "-"),
                                     "timestamp": ep.get("first_ts")}, ensure_ascii=False) + "\n")
                n += 1
                if n >= n_messages:
                    return n
    return n


def claude_copies(folder: Path, min_mb: float) -> tuple[list[Path], int]:
    """The real transcripts, copied with fresh session ids until >= min_mb."""
    sources = sorted(TRANSCRIPTS.rglob("*.jsonl"))
    sources = [s for s in sources if not s.name.startswith("fixture-")]
    if not sources:
        raise SystemExit(f"no Claude Code transcripts under {TRANSCRIPTS}")
    files, total, lines, i = [], 0, 0, 0
    while total < min_mb * 1024 * 1024:
        for src in sources:
            raw = src.read_text(encoding="utf-8")
            session = src.stem if not src.parent.name == "subagents" else src.parent.parent.name
            raw = raw.replace(session, f"{session[:8]}-copy{i:04d}")
            dst = folder / f"copy{i:04d}-{src.name}"
            dst.write_text(raw, encoding="utf-8")
            files.append(dst)
            total += len(raw.encode())
            lines += raw.count("\n")
        i += 1
    return files, lines


def timed_ingest(mem: Memory, paths: list[Path], fmt: str) -> tuple[float, object]:
    t0 = time.perf_counter()
    report = ingest(mem, paths, fmt=fmt, sync=False)
    return time.perf_counter() - t0, report


def timed_sync(mem: Memory) -> tuple[float, object]:
    t0 = time.perf_counter()
    rep = mem.sync.run(max_seconds=3600)
    return time.perf_counter() - t0, rep


def measured_run(store, uri: str, state: Path, paths: list[Path], fmt: str) -> tuple[float, int, float, int]:
    """Empty graph, fresh state directory: (ingest s, episodes, sync s, applied)."""
    store.clear()
    mem = Memory(Settings(state_dir=state, neo4j_uri=uri))
    try:
        secs, rep = timed_ingest(mem, paths, fmt)
        ssecs, srep = timed_sync(mem)
        if not srep.ok:
            raise SystemExit(f"sync failed: {srep.error}")
        return secs, rep.episodes_added, ssecs, srep.applied
    finally:
        mem.close()


def article_baseline(episodes, uri: str | None, state: Path) -> tuple[float, float]:
    """The article's write path: per episode, SQLite insert + commit, then Neo4j MERGE."""
    conn = sqlite3.connect(state / "naive.sqlite")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE IF NOT EXISTS ep (id TEXT PRIMARY KEY, text TEXT)")
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS ep_fts USING fts5(text)")
    t0 = time.perf_counter()
    for ep in episodes:
        conn.execute("INSERT OR REPLACE INTO ep VALUES (?, ?)", (ep.id, ep.text))
        conn.execute("INSERT INTO ep_fts (text) VALUES (?)", (ep.text,))
        conn.commit()
    sqlite_rate = len(episodes) / (time.perf_counter() - t0)
    neo_rate = float("nan")
    if uri:
        from neo4j import GraphDatabase

        drv = GraphDatabase.driver(uri, auth=None)
        t0 = time.perf_counter()
        with drv.session() as s:
            for ep in episodes:
                s.run("MERGE (e:NaiveEpisode {id: $id}) SET e.text = $text", id=ep.id, text=ep.text).consume()
            s.run("MATCH (e:NaiveEpisode) DETACH DELETE e").consume()
        neo_rate = len(episodes) / (time.perf_counter() - t0)
        drv.close()
    return sqlite_rate, neo_rate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--claude-mb", type=float, default=50.0)
    ap.add_argument("--neo4j-uri")
    ap.add_argument("--repeats", type=int, default=3, help="runs per corpus (the table gives the median)")
    args = ap.parse_args()
    server = None
    uri = args.neo4j_uri
    if not uri:
        from neo4j_server import Neo4jServer

        server = Neo4jServer()
        uri = server.start()
    print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}, load {os.getloadavg()[0]:.2f}")
    rows = []
    try:
        with tempfile.TemporaryDirectory(prefix="ars-ingest-") as tmp:
            base = Path(tmp)
            # -- synthetic ---------------------------------------------------------
            corpus = base / "synthetic.jsonl"
            n_msgs = synthetic_messages(corpus, args.messages)
            mb = corpus.stat().st_size / 1e6
            from core.memory.tiers.neo4j import Neo4jStore

            store = Neo4jStore(uri)
            runs = [measured_run(store, uri, base / f"s1-{i}", [corpus], "jsonl") for i in range(args.repeats)]
            rows.append(("synthetic generic JSONL", n_msgs, mb, runs))
            sample = PARSERS["jsonl"](corpus).episodes[:1000]
            naive_sql, naive_neo = article_baseline(sample, uri, base)
            # -- Claude Code, repeated ------------------------------------------------
            folder = base / "claude"
            folder.mkdir()
            files, n_lines = claude_copies(folder, args.claude_mb)
            mb2 = sum(f.stat().st_size for f in files) / 1e6
            runs = [measured_run(store, uri, base / f"s2-{i}", [folder], "claude-code") for i in range(args.repeats)]
            rows.append((f"Claude Code transcripts x{len(files)} files", n_lines, mb2, runs))

            print(f"\nThroughput, median of {args.repeats} runs (each: empty graph, fresh state directory, ingest, then"
                  " `sync run`); durable: acknowledged after the ledger fsync; Neo4j by the sync worker")
            print("| corpus | messages (lines) | MB | episodes | ingest s | messages/s | MB/s | sync s "
                  "| episodes/s to Neo4j | episodes/s per run |")
            print("|---|---|---|---|---|---|---|---|---|---|")
            for name, msgs, size, runs in rows:
                eps = runs[0][1]
                s_ing = statistics.median(r[0] for r in runs)
                s_sync = statistics.median(r[2] for r in runs)
                per_run = ", ".join(f"{r[3] / r[2]:,.0f}" for r in runs)
                print(f"| {name} | {msgs} | {size:.1f} | {eps} | {s_ing:.1f} | {msgs / s_ing:,.0f} | {size / s_ing:.1f} "
                      f"| {s_sync:.1f} | {eps / s_sync if s_sync else 0:,.0f} | {per_run} |")
            print(f"| article write path (per-episode SQLite commit, then Neo4j MERGE), 1,000 episodes | | | | | "
                  f"{naive_sql * 4:,.0f} (~4 msgs/episode; {naive_sql:,.0f} episodes/s) | | | {naive_neo:,.0f} | |")
            print("\nThe first run of a corpus also pays the JVM compiling Neo4j's write path for that shape of"
                  " data (a long-running server has); the median is the steady state.")

            # -- Neo4j outage ---------------------------------------------------------
            chunks = base / "chunks"
            chunks.mkdir()
            lines = corpus.read_text(encoding="utf-8").splitlines(keepends=True)[:20_000]
            per = len(lines) // 10
            paths = []
            for i in range(10):
                p = chunks / f"chunk{i}.jsonl"
                p.write_text("".join(lines[i * per:(i + 1) * per]), encoding="utf-8")
                paths.append(p)
            store.clear()
            mem = Memory(Settings(state_dir=base / "s3", neo4j_uri=uri))
            deferred = 0
            t_outage = None
            for i, p in enumerate(paths):
                if i == 3 and server is not None:
                    server.kill()
                    t_outage = time.perf_counter()
                rep = ingest(mem, [p], fmt="jsonl")
                if rep.sync and not rep.sync["ok"]:
                    deferred += 1
            outage_ingest = time.perf_counter() - t_outage if t_outage else 0.0
            pending_before = mem.sync.pending()
            if server is not None:
                server.start()
            mem.close()
            mem = Memory(Settings(state_dir=base / "s3", neo4j_uri=uri))
            t0 = time.perf_counter()
            mem.sync.run(max_seconds=600)
            catch_up = time.perf_counter() - t0
            st = mem.sync.status()
            expected = sum(len(PARSERS["jsonl"](p).episodes) for p in paths)
            print("\nNeo4j outage (killed after chunk 3 of 10, restarted after chunk 10)")
            print("| chunks ingested while down | ingest time while down s | pending when back | catch-up s | "
                  "sqlite | neo4j | drift | lost |")
            print("|---|---|---|---|---|---|---|---|")
            c = st["counts"]
            lost = expected - min(c["sqlite"] or 0, c["neo4j"] or 0)
            print(f"| {deferred} | {outage_ingest:.1f} | {pending_before} | {catch_up:.1f} | {c['sqlite']} | "
                  f"{c['neo4j']} | {st['drift']} | {lost} |")
            mem.close()
            store.close()
    finally:
        if server is not None:
            server.close()


if __name__ == "__main__":
    main()
