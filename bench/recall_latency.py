"""Recall latency per tier and fused, against the article's naive recall, and
under Neo4j outages (stopped, black-holed), on a seeded synthetic corpus.

    python bench/recall_latency.py [--sizes 10000,100000] [--queries 200] [--seed 7]
    python bench/recall_latency.py --series fresh --sizes 10000 [--fresh-queries 20]

For each corpus size: a fresh state directory and a fresh real Neo4j 5.26
(scripts/neo4j_server.py), the corpus loaded into both stores (timed per
store), then single-client latency of ``Memory.recall(q, k=10, tiers=...)``
for each tier alone and fused (per-tier deadlines: Settings defaults), the
naive baseline (SQLite ``LIKE`` AND / Neo4j ``CONTAINS`` AND, newest first),
then the outage scenarios, then the fresh-process series: each query a new
``ars recall --json`` process (how the CLI and agent hooks call ARS), wall time
from spawn to exit with Neo4j not configured, up, black-holed and stopped, each
idle and beside two busy loops (``--series fresh`` runs only that one, on the
same ingested and synced state). Prints markdown tables (and saves them to
bench/out/recall_latency.txt); targets are printed next to the numbers, never
asserted. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "bench"))

from core.config import Settings  # noqa: E402
from core.ingest.formats.generic import parse_episodes  # noqa: E402
from core.ingest.pipeline import ingest  # noqa: E402
from core.models import Episode  # noqa: E402
from core.memory.memory import Memory  # noqa: E402
from core.memory.query import prepare_query  # noqa: E402
from core.memory.sources import SourceRegistry  # noqa: E402
from core.memory.text import tokenize  # noqa: E402
from synthetic import make_queries, write_corpus  # noqa: E402

K = 10
# Targets (at 100k episodes); printed next to the measurements, never asserted.
TARGET_SQLITE_P95 = 10.0
TARGET_NEO4J_P95 = 40.0
TARGET_FUSED_P95 = 60.0
TARGET_STOPPED_FUSED_P95 = 15.0
BLACKHOLE_SLACK_MS = 50.0


# -- output --------------------------------------------------------------------------
class Out:
    """Markdown to stdout and to the output file; progress to stderr."""

    def __init__(self, path: Path | None):
        self.fh = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.fh = open(path, "w", encoding="utf-8")

    def __call__(self, text: str = "") -> None:
        print(text, flush=True)
        if self.fh:
            self.fh.write(text + "\n")
            self.fh.flush()

    def table(self, headers: Sequence[str], rows: Iterable[Sequence[object]]) -> None:
        self("| " + " | ".join(headers) + " |")
        self("|" + "|".join("---" for _ in headers) + "|")
        for r in rows:
            self("| " + " | ".join(str(c) for c in r) + " |")
        self()


def progress(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# -- stats -------------------------------------------------------------------------------
def pct(values: Sequence[float], p: float) -> float:
    """Percentile by linear interpolation (numpy's default), stdlib only."""
    if not values:
        return float("nan")
    s = sorted(values)
    pos = (len(s) - 1) * p / 100
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def ms(v: float) -> str:
    if v != v:  # nan
        return "–"
    return f"{v:.1f}" if v < 100 else f"{v:.0f}"


def loadavg() -> str:
    a, b, c = os.getloadavg()
    return f"{a:.2f} {b:.2f} {c:.2f}"


def rss_mb(pid: int | str = "self") -> tuple[float, float]:
    """(current RSS, peak RSS) in MiB of a process, from /proc."""
    cur = peak = float("nan")
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                cur = int(line.split()[1]) / 1024
            elif line.startswith("VmHWM:"):
                peak = int(line.split()[1]) / 1024
    except OSError:
        pass
    return cur, peak


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (Linux /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_quiet(pid: int, limit: float = 120.0, busy: float = 0.10) -> tuple[float, float]:
    """Wait until a process uses under ``busy`` of a core over a second (Neo4j
    merges index segments and flushes pages for a while after a bulk load; on two
    cores that would be timed as SQLite latency). Returns (waited s, last share)."""
    t0 = time.perf_counter()
    share = 0.0
    while time.perf_counter() - t0 < limit:
        c0, w0 = cpu_seconds(pid), time.perf_counter()
        time.sleep(1.0)
        share = (cpu_seconds(pid) - c0) / (time.perf_counter() - w0)
        if share < busy:
            break
    return time.perf_counter() - t0, share


def du_mb(path: Path) -> float:
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(root, f))
            except OSError:
                pass
    return total / 2**20


@dataclass
class Series:
    """Latencies of one system over the query set, with what each call reported."""

    name: str
    lat: list[float] = field(default_factory=list)
    statuses: Counter = field(default_factory=Counter)  # "tier:status" counts
    answered: int = 0  # calls with at least one hit
    degraded: int = 0
    clean: list[float] = field(default_factory=list)  # latencies of calls where no tier failed
    queries: list[str] = field(default_factory=list)
    trips: int = 0  # calls short-circuited by an open breaker and re-run once it closed

    def slowest(self, n: int = 3) -> str:
        worst = sorted(zip(self.lat, self.queries), reverse=True)[:n]
        return ", ".join(f"{ms(t)} ms `{q[:40]}`" for t, q in worst)

    def row(self) -> list[str]:
        n = len(self.lat)
        odd = ", ".join(f"{k} {v}" for k, v in sorted(self.statuses.items())
                        if not k.endswith((":ok", ":empty", ":skipped"))) or "–"
        if self.trips:
            odd += f"; breaker short-circuited {self.trips} calls (re-run once it closed)"
        clean = f"{len(self.clean)}: {ms(pct(self.clean, 50))} / {ms(pct(self.clean, 95))}" if self.clean else "0"
        return [self.name, str(n), ms(pct(self.lat, 50)), ms(pct(self.lat, 95)), ms(max(self.lat, default=float("nan"))),
                ms(sum(self.lat) / n if n else float("nan")), clean,
                f"{100 * self.answered / n:.0f} %" if n else "–", odd]


SERIES_HEADERS = ["system", "calls", "p50 ms", "p95 ms", "max ms", "mean ms",
                  "calls with no failed tier: n: p50 / p95 ms", "≥1 hit", "non-ok tier statuses (count)"]


def short_circuited(r) -> bool:
    rep = r.tier("neo4j")
    return rep is not None and rep.status == "down" and rep.error.startswith("CircuitOpen")


def timed_recall(memory: Memory, q: str, tiers: str | None, s: Series, rerun_open: bool = False) -> float:
    """Time one recall. With ``rerun_open`` (the healthy-server series), a call that
    the Neo4j breaker short-circuited is not a latency sample of the system under
    test: count the trip, wait until the breaker closes, and time the query again."""
    for _ in range(4):
        t0 = time.perf_counter()
        r = memory.recall(q, k=K, tiers=tiers)
        dt = (time.perf_counter() - t0) * 1000
        if not (rerun_open and short_circuited(r)):
            break
        s.trips += 1
        neo4j_ready(memory)
    s.lat.append(dt)
    s.queries.append(q)
    s.answered += bool(r.hits)
    s.degraded += r.degraded
    if not r.degraded:
        s.clean.append(dt)
    for t in r.tiers:
        s.statuses[f"{t.tier}:{t.status}"] += 1
    return dt


def drain(memory: Memory, timeout: float = 600.0) -> float:
    """Wait until every tier pool is idle (work past a deadline keeps running in
    its thread and holds the GIL); returns the seconds waited."""
    t0 = time.monotonic()
    for pool in memory._pools.values():
        n = getattr(pool, "_max_workers", None) or pool._workers  # ThreadPoolExecutor or DaemonPool
        barrier = threading.Barrier(n + 1)
        for _ in range(n):
            pool.submit(barrier.wait, timeout)
        try:
            barrier.wait(max(0.1, timeout - (time.monotonic() - t0)))
        except threading.BrokenBarrierError:
            progress("pool did not drain in time")
    return time.monotonic() - t0


def neo4j_ready(memory: Memory, timeout: float = 60.0) -> float:
    """Wait until the breaker lets calls through and a health probe succeeds, so a
    timed series does not start with the breaker open; returns the seconds waited."""
    t0 = time.monotonic()
    store = memory.neo4j
    while time.monotonic() - t0 < timeout:
        h = store.health()  # goes through the breaker: a probe once the cooldown is over
        if h.status in ("ok", "empty") and store.breaker.snapshot().state == "closed":
            return time.monotonic() - t0
        time.sleep(0.25)
    progress("neo4j not ready")
    return time.monotonic() - t0


def core_version() -> str:
    """The commit this run measured, and which core/ and tui/ files differ from it
    (the fresh-process series runs the CLI too)."""
    try:
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "core", "tui"],
                               capture_output=True, text=True).stdout.split("\n")
        dirty = [d[3:] for d in dirty if d.strip()]
        return head + (f" + uncommitted changes in {', '.join(dirty)}" if dirty else " (clean core/ and tui/)")
    except OSError:
        return "?"


# -- machine facts -----------------------------------------------------------------------
def machine_facts(out: Out, args) -> None:
    import neo4j as neo4j_driver

    rg = shutil.which("rg")
    rg_v = subprocess.run([rg, "--version"], capture_output=True, text=True).stdout.split("\n")[0] if rg else "absent"
    try:
        java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.split("\n")[0]
    except OSError:
        java = "absent"
    mem_total = "?"
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal:"):
                mem_total = f"{int(line.split()[1]) / 2**20:.1f} GiB"
    except OSError:
        pass
    cpu = platform.processor() or "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    s = Settings(state_dir=Path("unused"))
    out("# Recall latency benchmark")
    out()
    out(f"`python bench/recall_latency.py --series {args.series} --sizes {args.sizes} --queries {args.queries}"
        f" --seed {args.seed} --fresh-queries {args.fresh_queries} --fresh-bytecode {args.fresh_bytecode}`"
        f" — started {time.strftime('%Y-%m-%d %H:%M:%S')}")
    out()
    out.table(["fact", "value"], [
        ["cores (os.cpu_count)", os.cpu_count()],
        ["CPU", cpu],
        ["memory", mem_total],
        ["Python", platform.python_version()],
        ["SQLite", sqlite3.sqlite_version],
        ["neo4j driver", neo4j_driver.__version__],
        ["Java", java],
        ["Neo4j server", "5.26 embedded (scripts/neo4j/run: -Xmx1g, page cache 256 MiB)"],
        ["ripgrep", rg_v + (f" ({rg})" if rg else "")],
        ["deadlines (Settings defaults)",
         f"neo4j {s.neo4j_deadline * 1000:.0f} ms, sqlite {s.sqlite_deadline * 1000:.0f} ms, files {s.files_deadline * 1000:.0f} ms"],
        ["neo4j connect timeout / breaker cooldown", f"{s.neo4j_connect_timeout:.1f} s / {s.neo4j_breaker_cooldown:.1f} s"],
        ["core version", core_version()],
        ["load average at start (1/5/15 min)", loadavg()],
    ])


# -- loading ---------------------------------------------------------------------------------
def read_batches(path: Path, batch: int) -> Iterable[list[Episode]]:
    buf: list[Episode] = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            buf.append(Episode.model_validate_json(line))
            if len(buf) >= batch:
                yield buf
                buf = []
    if buf:
        yield buf


def load_corpus(memory: Memory, corpus: Path, n: int, mode: str, batch: int) -> list[list[object]]:
    """Load ``corpus`` into SQLite, the span registry and Neo4j; rows for the load table."""
    rows: list[list[object]] = []

    def rate(sec: float) -> str:
        return f"{n / sec:,.0f}" if sec > 0 else "–"

    if mode == "ingest":
        # The real write path, each store timed apart: ingest() appends to the
        # ledger (group commit, fsync per 1,000) and applies SQLite in the same
        # call; the sync worker then drains the ledger into Neo4j.
        progress(f"ingest(sync=False) -> ledger + SQLite + span registry, {n:,} episodes")
        t0 = time.perf_counter()
        rep = ingest(memory, [corpus], fmt="episodes", sync=False)
        t_sql = time.perf_counter() - t0
        if rep.episodes_added != n:
            progress(f"ingest added {rep.episodes_added} of {n}: {rep.malformed[:3]}")
        from core.ingest import pipeline as core_pipeline

        rows.append(["ledger + SQLite + span registry: `ingest(memory, [file], fmt='episodes', sync=False)`"
                     f" (parse, unchanged check, ledger append + fsync per {getattr(core_pipeline, 'BATCH', 0):,},"
                     " SQLite upsert, register spans)",
                     f"{t_sql:.1f}", rate(t_sql)])
        progress(f"sync worker -> Neo4j, {n:,} episodes")
        t0 = time.perf_counter()
        srep = memory.sync.run(max_seconds=7200)
        t_neo = time.perf_counter() - t0
        if not srep.ok or srep.pending:
            progress(f"sync incomplete: {srep}")
        from core.memory.tiers.neo4j import WRITE_BATCH

        rows.append(["Neo4j: sync worker `memory.sync.run()` (reads the ledger from its cursor, one write"
                     f" transaction and cursor save per {WRITE_BATCH:,} episodes, the next batch built while"
                     " one commits;"
                     f" {srep.batches} batches"
                     f"{', pending ' + str(srep.pending) if srep.pending else ''}{', ' + srep.error if srep.error else ''})",
                     f"{t_neo:.1f}", rate(t_neo)])
        t0 = time.perf_counter()
        memory.settle()
        rows.append(["Neo4j warm-up after the load (`memory.settle()`)", f"{time.perf_counter() - t0:.1f}", "–"])
        return rows

    # mode == "direct": stream batches into each store's upsert, bypassing the
    # ledger; each store timed alone.
    t_parse = t_sql = t_neo = 0.0
    spans: list[tuple[int, int, str]] = []
    done = 0
    it = iter(read_batches(corpus, batch))
    while True:
        t0 = time.perf_counter()
        eps = next(it, None)
        t_parse += time.perf_counter() - t0
        if eps is None:
            break
        spans.extend((done + i + 1, done + i + 1, e.id) for i, e in enumerate(eps))
        t0 = time.perf_counter()
        memory.sqlite.upsert(eps)
        t_sql += time.perf_counter() - t0
        t0 = time.perf_counter()
        memory.neo4j.upsert(eps)
        t_neo += time.perf_counter() - t0
        done += len(eps)
        if done % (batch * 10) == 0:
            progress(f"  loaded {done:,}/{n:,} (sqlite {done / t_sql:,.0f}/s, neo4j {done / t_neo:,.0f}/s)")
    t0 = time.perf_counter()
    SourceRegistry(memory.state_dir).register(corpus, "episodes", spans)
    t_reg = time.perf_counter() - t0
    rows.append(["parse episode JSONL (pydantic)", f"{t_parse:.1f}", rate(t_parse)])
    rows.append([f"SQLite `memory.sqlite.upsert` in batches of {batch} (no ledger)", f"{t_sql:.1f}", rate(t_sql)])
    rows.append([f"Neo4j `memory.neo4j.upsert` in batches of {batch} (no ledger)", f"{t_neo:.1f}", rate(t_neo)])
    rows.append(["span registry (`SourceRegistry.register`)", f"{t_reg:.2f}", rate(t_reg)])
    memory.settle()
    return rows


# -- the naive baseline (the article's recall) ------------------------------------------------
def naive_sqlite(db: Path) -> Callable[[list[str]], int]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, check_same_thread=False)

    def run(tokens: list[str]) -> int:
        where = " AND ".join("text LIKE ? ESCAPE '\\'" for _ in tokens)
        params = ["%" + t.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%" for t in tokens]
        rows = conn.execute(f"SELECT id FROM episodes WHERE {where} ORDER BY last_ts DESC LIMIT {K}", params).fetchall()
        return len(rows)

    run.close = conn.close  # type: ignore[attr-defined]
    return run


NAIVE_CYPHER = (
    "MATCH (e:Episode) WHERE all(t IN $tokens WHERE toLower(e.text) CONTAINS t) "
    "RETURN e ORDER BY e.last_ts DESC LIMIT 10"
)


def naive_neo4j(uri: str) -> Callable[[list[str]], int]:
    from neo4j import GraphDatabase

    driver = GraphDatabase.driver(uri, auth=None)

    def run(tokens: list[str]) -> int:
        with driver.session() as s:
            return len(s.run(NAIVE_CYPHER, tokens=tokens).data())

    run.close = driver.close  # type: ignore[attr-defined]
    return run


def measure_naive(name: str, fn: Callable[[list[str]], int], queries: list[str], budget_s: float) -> Series:
    s = Series(name)
    start = time.monotonic()
    for q in queries:
        if time.monotonic() - start > budget_s:
            break
        toks = tokenize(q, query=True)
        t0 = time.perf_counter()
        n = fn(toks)
        s.lat.append((time.perf_counter() - t0) * 1000)
        s.answered += n > 0
    return s


# -- a black hole: accepts TCP connections, never answers ----------------------------------------
class BlackHole:
    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.conns: list[socket.socket] = []
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._accept, name="blackhole", daemon=True)
        self.thread.start()

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                c, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self.conns.append(c)  # held open, never read, never written

    def close(self) -> None:
        self._stop.set()
        self.thread.join(2)
        for c in self.conns:
            c.close()
        self.sock.close()


# -- fresh process per query: how the CLI and agent hooks call ARS ---------------------------------
TARGET_FRESH_P50 = 300.0  # ms, `ars recall` wall time from spawn to exit, idle machine
BUSY_LOOP = ["sh", "-c", "while :; do :; done"]


def ars_command() -> list[str]:
    """The installed ``ars`` console script beside this Python (the venv's), else on PATH."""
    exe = Path(sys.executable).parent / "ars"
    found = str(exe) if exe.exists() else shutil.which("ars")
    if not found:
        raise SystemExit("no `ars` console script beside this Python or on PATH: `pip install -e .` first")
    return [found]


def child_env(neo4j_uri: str | None, pycache: Path | None = None) -> dict[str, str]:
    """This environment without any ARS_* variable, plus ARS_NEO4J_URI when given. With
    ``pycache``, bytecode is cached there (PYTHONDONTWRITEBYTECODE dropped, PYTHONPYCACHEPREFIX
    set), as an installed ARS runs: with PYTHONDONTWRITEBYTECODE=1 (set in some agent and CI
    environments) an editable install compiles every core/ and tui/ module it imports, in
    every process. The prefix keeps the bytecode out of the source tree."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARS_")}
    if pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    if neo4j_uri:
        env["ARS_NEO4J_URI"] = neo4j_uri
    return env


def machine_cpu() -> tuple[int, int]:
    """(busy, total) jiffies of all cores so far, from /proc/stat."""
    try:
        f = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    except OSError:
        return 0, 0
    idle = f[3] + (f[4] if len(f) > 4 else 0)  # idle + iowait
    return sum(f[:8]) - idle, sum(f[:8])


def machine_busy(a: tuple[int, int], b: tuple[int, int]) -> float:
    return (b[0] - a[0]) / (b[1] - a[1]) if b[1] > a[1] else float("nan")


DAEMON_MODES = ("off", "on")


def daemon_status(ars: list[str], state: Path, env: dict[str, str], cwd: Path) -> list[dict]:
    """The recall daemons of ``state`` (``ars daemon status --json``; [] for a core without one)."""
    _, p, _ = time_process(ars + ["daemon", "status", "--json", "--state", str(state)], env, cwd)
    try:
        return json.loads(p.stdout)["daemons"] if p is not None and p.returncode == 0 else []
    except (ValueError, KeyError):
        return []


def wait_daemon(ars: list[str], state: Path, env: dict[str, str], cwd: Path, limit: float = 60.0) -> float:
    """Seconds until this configuration's daemon is warm (NaN if none came up within ``limit``)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        if any(d.get("current") and d.get("ready") for d in daemon_status(ars, state, env, cwd)):
            return time.monotonic() - t0
        time.sleep(0.1)
    return float("nan")


def stop_daemons(ars: list[str], state: Path, env: dict[str, str], cwd: Path) -> int:
    """Stop the state's daemons; how many answers the current one served."""
    served = sum(int(d.get("served", 0)) for d in daemon_status(ars, state, env, cwd) if d.get("current"))
    time_process(ars + ["daemon", "stop", "--state", str(state)], env, cwd)
    return served


class BusyLoops:
    """Two (``n``) shell busy loops beside the series; killed, by their own pids, on exit."""

    def __init__(self, n: int = 2):
        self.n = n
        self.procs: list[subprocess.Popen] = []

    def __enter__(self) -> "BusyLoops":
        for _ in range(self.n):
            self.procs.append(subprocess.Popen(BUSY_LOOP, stdin=subprocess.DEVNULL))
        time.sleep(0.5)  # let the scheduler see them before the first timed spawn
        return self

    def __exit__(self, *exc) -> None:
        for p in self.procs:
            p.kill()
        for p in self.procs:
            p.wait()
        self.procs.clear()


@dataclass
class FreshRow:
    """One condition × load: wall time of a fresh process per query, and what each answer said."""

    condition: str
    load: str
    neo4j_expected: bool = False  # Neo4j up: an answer without it lost a tier
    wall: list[float] = field(default_factory=list)
    inproc: list[float] = field(default_factory=list)  # RecallResult.latency_ms
    overhead: list[float] = field(default_factory=list)  # wall - latency_ms, per call
    lost_sqlite: int = 0
    lost_neo4j: int = 0
    neo4j: Counter = field(default_factory=Counter)
    sqlite: Counter = field(default_factory=Counter)  # statuses of the answers that lost it
    failed: list[str] = field(default_factory=list)  # exit != 0 or no JSON
    la_after: str = ""
    cpu_busy: float = float("nan")  # share of the whole machine's CPU in use during the row
    is_ars: bool = True
    daemon_ready_s: float = float("nan")  # daemon rows: from the untimed first calls to a warm daemon
    daemon_served: int | None = None  # daemon rows: timed answers the daemon gave (the rest answered alone)

    def row(self) -> list[str]:
        n = len(self.wall)
        failed = f"{len(self.failed)}: {self.failed[0][:80]}" if self.failed else "0"
        return [self.condition, self.load, str(n), ms(pct(self.wall, 50)), ms(pct(self.wall, 95)),
                ms(max(self.wall, default=float("nan"))),
                ms(pct(self.inproc, 50)) if self.is_ars else "–",
                ms(pct(self.overhead, 50)) if self.is_ars else "–",
                (f"{self.lost_sqlite}/{n}" + (f" ({', '.join(f'{k} {v}' for k, v in sorted(self.sqlite.items()))})"
                                             if self.sqlite else "")) if self.is_ars else "–",
                (f"{self.lost_neo4j}/{n}" if self.neo4j_expected else "n/a") if self.is_ars else "–",
                ", ".join(f"{k} {v}" for k, v in sorted(self.neo4j.items())) or "–",
                failed.replace("|", "/"),
                "–" if self.daemon_served is None else f"{self.daemon_served}/{n} (warm after {self.daemon_ready_s:.1f} s)",
                f"{self.cpu_busy * 100:.0f} %", self.la_after]


FRESH_HEADERS = ["condition", "load", "n", "wall p50 ms", "wall p95 ms", "wall max ms",
                 "in-process recall p50 ms (latency_ms)", "wall − in-process p50 ms",
                 "lost sqlite (not ok/empty)", "lost neo4j (where up)", "neo4j status (count)",
                 "failed runs (exit ≠ 0 / no JSON)", "answered by the daemon", "machine CPU busy during row",
                 "load avg 1 min after"]


def time_process(cmd: list[str], env: dict[str, str], cwd: Path, timeout: float = 120.0) -> tuple[float, subprocess.CompletedProcess | None, str]:
    """Wall ms from spawn to exit (output read through pipes, as a hook does)."""
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return (time.perf_counter() - t0) * 1000, None, f"no exit within {timeout:.0f} s"
    return (time.perf_counter() - t0) * 1000, p, ""


def fresh_run(row: FreshRow, cmd: list[str], env: dict[str, str], cwd: Path) -> None:
    dt, p, err = time_process(cmd, env, cwd)
    row.wall.append(dt)
    if not row.is_ars:
        if p is None or p.returncode != 0:
            row.failed.append(err or f"exit {p.returncode}: {p.stderr.strip()[-200:]}")
        return
    data = None
    if p is not None and p.returncode == 0:
        try:
            data = json.loads(p.stdout)
        except ValueError as exc:
            err = f"bad JSON ({exc}): {p.stdout[:80]!r}"
    elif p is not None:
        err = f"exit {p.returncode}: {' '.join(p.stderr.split())[-200:]}"
    if data is None:
        row.failed.append(err)
        row.lost_sqlite += 1  # no answer at all: the SQLite tier's answer is lost too
        row.lost_neo4j += row.neo4j_expected
        row.neo4j["(no answer)"] += 1
        row.sqlite["(no answer)"] += 1
        return
    tiers = {t["tier"]: t for t in data.get("tiers", [])}
    lat = float(data.get("latency_ms", float("nan")))
    row.inproc.append(lat)
    row.overhead.append(dt - lat)
    sq = tiers.get("sqlite", {}).get("status", "missing")
    if sq not in ("ok", "empty"):
        row.lost_sqlite += 1
        row.sqlite[sq] += 1
    neo = tiers.get("neo4j", {}).get("status", "missing")
    why = tiers.get("neo4j", {}).get("error", "")
    # a process that skipped Neo4j because an earlier one found it down (the breaker shared
    # through the state directory) says so; counted apart from a Neo4j that failed this process
    row.neo4j[neo + (" (skipped: shared breaker)" if neo == "down" and why.startswith("circuit open") else "")] += 1
    if row.neo4j_expected:
        row.lost_neo4j += neo not in ("ok", "empty")


def reset_shared_breaker(state: Path) -> bool:
    """Remove the Neo4j breaker the processes of a state directory share (if this core has
    one), so a row does not start with the verdict the previous condition left."""
    try:
        from core.infra.shared_breaker import FILE
    except ImportError:
        return False
    path = state / FILE
    existed = path.exists()
    path.unlink(missing_ok=True)
    return existed


def fresh_series(out: Out, args, state: Path, queries: list[str], server=None) -> list[FreshRow]:
    """Each query a new ``ars recall --json --state DIR -- QUERY`` process, under Neo4j not
    configured / up / black-holed / stopped, each idle and beside two busy loops, with the
    interpreter's own start-up as the baseline. ``server`` (a running Neo4jServer over the
    same, synced data) is stopped for the last condition."""
    qs = queries[: args.fresh_queries]
    ars = ars_command()
    cwd = state.parent
    py = sys.executable
    pycache = state.parent / "pycache" if args.fresh_bytecode == "cache" else None

    def recall_cmd(q: str) -> list[str]:
        return ars + ["recall", "--json", "--state", str(state), "--", q]

    rows: list[FreshRow] = []

    def series(condition: str, uri: str | None, *, expected: bool = False, cmd: list[str] | None = None,
               before: Callable[[], object] | None = None) -> None:
        # ARS rows twice: every call answering alone (no daemon), and the default, where the
        # first (untimed) call leaves a warm recall daemon that the timed calls hand their query to
        for daemon in ((None,) if cmd is not None else DAEMON_MODES):
            for load in ("idle", "2 busy loops"):
                if before is not None:
                    before()
                jvm = server.proc.pid if server is not None and server.proc is not None else None
                if jvm:
                    wait_quiet(jvm)  # the JVM's compiling/collecting after the last series is not this one's cost
                label = condition if daemon is None else f"{condition}; daemon {daemon}"
                row = FreshRow(label, load, neo4j_expected=expected, is_ars=cmd is None)
                reset_shared_breaker(state)
                env = child_env(uri, pycache)
                if daemon is not None:
                    env["ARS_RECALL_DAEMON"] = "auto" if daemon == "on" else "off"
                progress(f"fresh process: {label}, {load} ({len(qs)} runs)")
                with (BusyLoops(2) if load != "idle" else _Nothing()):
                    for q in qs[: args.fresh_warmup]:  # untimed: page cache, pyc, the JVM's plan for a new connection
                        time_process(cmd or recall_cmd(q), env, cwd)
                    if daemon == "on":
                        row.daemon_ready_s = wait_daemon(ars, state, env, cwd)
                    c0 = machine_cpu()
                    for q in qs:
                        fresh_run(row, cmd or recall_cmd(q), env, cwd)
                    row.cpu_busy = machine_busy(c0, machine_cpu())
                    row.la_after = f"{os.getloadavg()[0]:.2f}"
                if daemon == "on":
                    row.daemon_served = stop_daemons(ars, state, env, cwd)
                rows.append(row)

    la0 = loadavg()
    series("baseline: `python -c 'import sys'`", None, cmd=[py, "-c", "import sys"])
    series("baseline: `python -c 'import tui.cli.main'` (the CLI's imports, no recall)", None,
           cmd=[py, "-c", "import tui.cli.main"])
    series("Neo4j not configured", None)
    if server is not None and server.uri:
        if not server.running:
            server.restart(timeout=180)
        series(f"Neo4j up (ARS_NEO4J_URI={server.uri}, synced, JVM warm)", server.uri, expected=True)
    hole = BlackHole()
    try:
        series(f"Neo4j black-holed (ARS_NEO4J_URI={hole.uri}: accepts, never answers)", hole.uri)
        held = len(hole.conns)
    finally:
        hole.close()
    if server is not None and server.uri:
        uri = server.uri

        def restart() -> None:  # each row starts on a JVM nothing has queried yet
            server.restart(timeout=180)

        series(f"Neo4j up, just restarted (ARS_NEO4J_URI={uri}, cold JVM: only these processes query it)", uri,
               expected=True, before=restart)
        server.stop()
        series(f"Neo4j stopped (ARS_NEO4J_URI={uri}, port closed)", uri)

    out(f"### Fresh process per query: `ars recall --json --state DIR -- QUERY` "
        f"({len(qs)} queries per row, {args.fresh_warmup} untimed first)")
    out()
    out("How the CLI and agent hooks call ARS: every query is a new process. Wall time is from spawn to exit"
        " (`subprocess.run`, output read through pipes); in-process recall is the JSON's `latency_ms` (the"
        " `Memory.recall` call alone); wall − in-process is start-up (interpreter, imports, settings, opening"
        " the state) plus shut-down (closing pools and the driver). \"2 busy loops\": two"
        " `sh -c 'while :; do :; done'` beside the series on this machine's"
        f" {os.cpu_count()} cores, killed after it. Only ARS_NEO4J_URI is set in the child's environment"
        f" (every other ARS_* removed: Settings defaults). Bytecode: "
        + ("cached (`PYTHONPYCACHEPREFIX` in the work dir, `PYTHONDONTWRITEBYTECODE` dropped: as an installed ARS"
           " runs; the untimed runs fill the cache)" if pycache is not None else
           "this environment's (`PYTHONDONTWRITEBYTECODE` "
           + ("set: every process compiles the core/ and tui/ modules it imports)" if os.environ.get("PYTHONDONTWRITEBYTECODE")
              else "unset)"))
        + ". Each row starts without a shared Neo4j breaker"
        " in the state directory (`neo4j-breaker.json`, when this core has one), so no row inherits the last"
        f" condition's verdict; within a row it works as in use. Each ARS condition runs twice: \"daemon off\""
        " (`ARS_RECALL_DAEMON=off`: every process answers by itself, imports, driver and connection included) and"
        " \"daemon on\" (the default: the untimed first calls leave a recall daemon, the bench waits until it is warm,"
        " then the timed processes hand their query to it; the daemon is stopped after the row). Command: `{' '.join(ars)}`. The black hole held"
        f" {held} connections. Load average before: {la0}; after: {loadavg()}. \"idle\" means no busy loops"
        " of ours: other processes on the machine are not stopped, and the CPU column shows how busy all"
        f" {os.cpu_count()} cores were during each row (the `ars` process under test counts too: one"
        f" process alone keeps at most {100 / (os.cpu_count() or 1):.0f} % busy, plus Neo4j's own work).")
    out()
    out.table(FRESH_HEADERS, [r.row() for r in rows])
    return rows


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None


def fresh_targets(rows: list[FreshRow]) -> list[list[str]]:
    """[what, target, measured, verdict] rows for the fresh-process series."""
    out = []
    ars_rows = [r for r in rows if r.is_ars]
    lost = sum(r.lost_sqlite for r in ars_rows)
    n = sum(len(r.wall) for r in ars_rows)
    out.append(["fresh process: answers that lost the SQLite tier, all conditions and loads", "0",
                f"{lost} of {n}", "met" if lost == 0 else "MISSED"])
    for r in ars_rows:
        if r.load == "idle":
            v = pct(r.wall, 50)
            daemon = r.condition.rsplit("; ", 1)[1] if "; daemon " in r.condition else ""
            name = r.condition.split(' (')[0].split("; daemon ")[0] + (f", {daemon}" if daemon else "")
            out.append([f"fresh process `ars recall` wall p50, {name}, idle",
                        f"≤ {TARGET_FRESH_P50:.0f} ms", ms(v), "met" if v <= TARGET_FRESH_P50 else "MISSED"])
    return out


def run_fresh_only(out: Out, args, size: int, Neo4jServer) -> list[FreshRow]:
    """``--series fresh``: the state of one corpus size (ledger + SQLite by ingest, Neo4j by the
    sync worker, as in the full run), then only the fresh-process series."""
    work = Path(tempfile.mkdtemp(prefix=f"ars-bench-fresh-{size}-", dir=args.workdir))
    corpus = work / "episodes.jsonl"
    state = work / "state"
    out(f"## {size:,} episodes")
    out()
    progress(f"[{size:,}] generating corpus")
    write_corpus(corpus, size, args.seed)
    queries = make_queries(args.queries, args.seed, corpus, size)
    warm = make_queries(args.warmup, args.seed + 1000, corpus, size)
    progress(f"[{size:,}] starting Neo4j")
    server = Neo4jServer(data_dir=work / "neo4j")
    try:
        uri = server.start(timeout=180)
        memory = Memory(Settings(state_dir=state, neo4j_uri=uri))
        memory.neo4j.ensure_schema()
        progress(f"[{size:,}] loading ({args.load})")
        load_rows = load_corpus(memory, corpus, size, args.load, args.batch)
        n_sql, n_neo = memory.sqlite.count(), memory.neo4j.count()
        # the JVM warmed through the store (no deadline), as before the in-process series
        for q in warm:
            memory.neo4j.search(prepare_query(q), K, time.monotonic() + 60)
        memory.close()
        out(f"State: SQLite {n_sql:,} episodes, Neo4j {n_neo:,} episodes (`--load {args.load}`: "
            + "; ".join(f"{r[0].split(':')[0]} {r[1]} s" for r in load_rows) + f"), {du_mb(state):,.0f} MiB state dir.")
        out()
        rows = fresh_series(out, args, state, queries, server)
    finally:
        server.close()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    if args.keep:
        out(f"Kept: {work}")
        out()
    return rows


# -- one corpus size ----------------------------------------------------------------------------------
@dataclass
class SizeResult:
    size: int
    series: dict[str, Series] = field(default_factory=dict)
    stopped: Series | None = None
    blackhole: dict = field(default_factory=dict)
    recovery: dict = field(default_factory=dict)
    fresh: list[FreshRow] = field(default_factory=list)


def run_size(out: Out, args, size: int, Neo4jServer) -> SizeResult:
    res = SizeResult(size)
    work = Path(tempfile.mkdtemp(prefix=f"ars-bench-{size}-", dir=args.workdir))
    corpus = work / "episodes.jsonl"
    state = work / "state"
    out(f"## {size:,} episodes")
    out()
    out(f"Load average at start of this size: {loadavg()}")
    out()

    progress(f"[{size:,}] generating corpus")
    t0 = time.perf_counter()
    write_corpus(corpus, size, args.seed)
    t_gen = time.perf_counter() - t0
    queries = make_queries(args.queries, args.seed, corpus, size)
    warm = make_queries(args.warmup, args.seed + 1000, corpus, size)
    n_chars = n_cjk = 0
    with open(corpus, encoding="utf-8") as fh:
        for line in fh:
            t = json.loads(line)["text"]
            n_chars += len(t)
            n_cjk += sum(1 for ch in t if "\u4e00" <= ch <= "\u9fff")

    progress(f"[{size:,}] starting Neo4j")
    server = Neo4jServer(data_dir=work / "neo4j")
    t0 = time.perf_counter()
    uri = server.start(timeout=180)
    t_start = time.perf_counter() - t0
    memory = Memory(Settings(state_dir=state, neo4j_uri=uri))
    memory.neo4j.ensure_schema()

    progress(f"[{size:,}] loading ({args.load})")
    load_rows = load_corpus(memory, corpus, size, args.load, args.batch)
    n_sql, n_neo = memory.sqlite.count(), memory.neo4j.count()
    py_rss, py_peak = rss_mb()
    java_rss, java_peak = rss_mb(server.proc.pid) if server.proc else (float("nan"),) * 2
    out(f"### Bulk load into both stores ({size:,} episodes, `--load {args.load}`)")
    out()
    out(f"Corpus: {size:,} episodes, {n_chars / size:,.0f} characters per episode on average "
        f"({100 * n_cjk / max(n_chars, 1):.0f} % CJK), episode JSONL {corpus.stat().st_size / 2**20:,.0f} MiB, "
        f"generated in {t_gen:.1f} s. Neo4j started in {t_start:.1f} s.")
    out()
    out.table(["step", "seconds", "episodes/s"], load_rows)
    out(f"Stored: SQLite {n_sql:,} episodes ({du_mb(state):,.0f} MiB state dir), Neo4j {n_neo:,} episodes "
        f"({du_mb(work / 'neo4j'):,.0f} MiB data dir). RSS after load: Python {py_rss:,.0f} MiB "
        f"(peak {py_peak:,.0f}), Neo4j JVM {java_rss:,.0f} MiB (peak {java_peak:,.0f}).")
    out()

    # -- latency per tier and fused ------------------------------------------------------------------
    modes = [("neo4j", "neo4j"), ("sqlite", "sqlite"), ("files", "files"), ("fused (neo4j+sqlite, files as fallback)", None)]
    progress(f"[{size:,}] warm-up ({len(warm)} queries per system)")
    # Neo4j is warmed through the store with a long deadline: a cold JVM answers the
    # first queries in seconds, and through recall those would trip the breaker.
    t0 = time.perf_counter()
    cold = []
    for q in warm:
        t1 = time.perf_counter()
        memory.neo4j.search(prepare_query(q), K, time.monotonic() + 60)
        cold.append((time.perf_counter() - t1) * 1000)
    t_warm_neo = time.perf_counter() - t0
    for _, tiers in modes:
        if tiers != "neo4j":
            for q in warm:
                memory.recall(q, k=K, tiers=tiers)
    drain(memory)
    jvm = server.proc.pid if server.proc is not None else None
    la0 = loadavg()
    notes = []
    quiet_waits = []
    for name, tiers in modes:
        # the JVM compiles and collects for seconds after the load and after the Neo4j series;
        # each series starts with it quiet, so one tier's aftermath is not timed as another's latency
        quiet_waits.append(wait_quiet(jvm)[0] if jvm else 0.0)
        waited = neo4j_ready(memory) if tiers in ("neo4j", None) else 0.0
        progress(f"[{size:,}] timing {name}")
        s = Series(name)
        c0, w0 = (cpu_seconds(jvm), time.perf_counter()) if jvm else (0.0, 0.0)
        for q in queries:
            timed_recall(memory, q, tiers, s, rerun_open=tiers in ("neo4j", None))
        jvm_share = (cpu_seconds(jvm) - c0) / (time.perf_counter() - w0) if jvm else 0.0
        res.series[name.split()[0]] = s
        bg = drain(memory)
        notes.append(f"{name}: waited {waited:.1f} s for a closed breaker before, "
                     f"{bg:.1f} s after for work still running past its deadline, Neo4j JVM at "
                     f"{jvm_share * 100:.0f} % of a core during the series")

    progress(f"[{size:,}] naive baseline")
    nsql = naive_sqlite(state / "memory.sqlite")
    nneo = naive_neo4j(uri)
    for q in warm[:5]:
        nsql(tokenize(q, query=True))
        nneo(tokenize(q, query=True))
    naive = {
        "sqlite": measure_naive("naive SQLite: `text LIKE '%tok%'` AND …, ORDER BY last_ts DESC LIMIT 10",
                                nsql, queries, args.naive_budget),
        "neo4j": measure_naive("naive Neo4j: `all(t IN $tokens WHERE toLower(e.text) CONTAINS t)` ORDER BY last_ts DESC LIMIT 10",
                               nneo, queries, args.naive_budget),
    }
    nsql.close()
    nneo.close()
    la1 = loadavg()

    out(f"### Recall latency, single client, k={K} ({size:,} episodes, {len(queries)} queries, "
        f"{len(warm)} warm-up queries per system first)")
    out()
    out(f"Wall time of `memory.recall(q, k={K}, tiers=...)` (tokenising, fan-out, scoring, fusion, pydantic)."
        f" Each series starts once the Neo4j JVM is quiet (under 10 % of a core over a second; waited"
        f" {', '.join(f'{w:.0f}' for w in quiet_waits)} s). Load average before/after the timed calls: {la0} / {la1}. Neo4j warm-up through the store"
        f" (no deadline): {t_warm_neo:.1f} s for {len(warm)} queries, first {ms(cold[0])} ms, "
        f"then p50 {ms(pct(cold[1:], 50))} ms.")
    out()
    out.table(SERIES_HEADERS, [s.row() for s in res.series.values()])
    out("Slowest calls: " + "; ".join(f"{k}: {v.slowest()}" for k, v in res.series.items()) + ".")
    out()
    out("A tier that misses its deadline reports `timeout` (counted at its latency). For Neo4j a timeout is"
        " also a soft breaker failure; when the breaker opens, the calls it short-circuits (fast `down`) are"
        " not samples of a healthy server: the neo4j and fused series count them, wait until the breaker"
        " closes and re-run the query. Pools between series: " + "; ".join(notes) + ".")
    out()
    out("Naive baseline (the article's recall), same queries and surface tokens; ratio = naive / ours (same store):")
    out()
    rows = []
    for key, s in naive.items():
        ours = res.series[key]
        p50, p95 = pct(s.lat, 50), pct(s.lat, 95)
        rows.append([s.name, len(s.lat), ms(p50), ms(p95), ms(max(s.lat, default=float("nan"))),
                     f"{100 * s.answered / max(len(s.lat), 1):.0f} %",
                     f"{p50 / pct(ours.lat, 50):.1f}×", f"{p95 / pct(ours.lat, 95):.1f}×"])
    out.table(["naive system", "calls", "p50 ms", "p95 ms", "max ms", "≥1 hit", "p50 ratio", "p95 ratio"], rows)
    res.series["naive_sqlite"] = naive["sqlite"]
    res.series["naive_neo4j"] = naive["neo4j"]

    # -- outage (a): Neo4j stopped ----------------------------------------------------------------------
    progress(f"[{size:,}] outage (a): stopping Neo4j")
    t0 = time.perf_counter()
    server.stop()
    t_stop = time.perf_counter() - t0
    stopped = Series("fused, Neo4j stopped")
    drain(memory)
    for q in queries:
        timed_recall(memory, q, None, stopped)
    health = {h.tier: h for h in memory.health()}
    res.stopped = stopped
    bstate = memory.neo4j.breaker.snapshot()
    out(f"### Outage (a): Neo4j stopped (clean shutdown took {t_stop:.1f} s; port closed)")
    out()
    out.table(SERIES_HEADERS + ["degraded"], [stopped.row() + [f"{stopped.degraded}/{len(stopped.lat)}"]])
    out(f"Neo4j status afterwards: health() = `{health['neo4j'].status}` ({health['neo4j'].error[:120]}); "
        f"breaker {bstate.state}, {bstate.failures} failures recorded.")
    out()

    # -- recovery ---------------------------------------------------------------------------------------
    progress(f"[{size:,}] restarting Neo4j")
    t0 = time.perf_counter()
    server.restart(timeout=180)
    t_restart = time.perf_counter() - t0
    t_up = time.monotonic()
    timeline: list[tuple[float, float, str, str]] = []
    i = 0
    first_ok = None
    while time.monotonic() - t_up < args.recovery_timeout:
        q = queries[i % len(queries)]
        i += 1
        t0 = time.perf_counter()
        r = memory.recall(q, k=K)
        dt = (time.perf_counter() - t0) * 1000
        rep = r.tier("neo4j")
        timeline.append((time.monotonic() - t_up, dt, rep.status, rep.error[:90]))
        if rep.status in ("ok", "empty"):
            first_ok = timeline[-1]
            break
        time.sleep(args.recovery_interval)
    after = Series("fused after recovery")
    if first_ok:
        drain(memory)
        for q in queries[: args.after_recovery]:
            timed_recall(memory, q, None, after)
    res.recovery = {"restart_s": t_restart, "first_ok": first_ok, "calls": len(timeline)}
    out(f"### Recovery after restart (restart took {t_restart:.1f} s, same port and data dir; "
        f"one fused call every {args.recovery_interval * 1000:.0f} ms)")
    out()
    changes = []
    for j, (t, dt, st, err) in enumerate(timeline):
        if j == 0 or st != timeline[j - 1][2] or j == len(timeline) - 1 or "CircuitOpen" not in err:
            changes.append([f"{t:.2f}", j + 1, ms(dt), st, err.replace("|", "/") or "–"])
    out.table(["s after restart", "call #", "fused ms", "neo4j status", "neo4j error"], changes)
    if first_ok:
        out(f"First ok Neo4j answer {first_ok[0]:.2f} s after the restart returned (call {len(timeline)}).")
        out()
        out.table(SERIES_HEADERS, [after.row()])
    else:
        out(f"No ok Neo4j answer within {args.recovery_timeout:.0f} s of the restart.")
        out()

    # -- outage (b): black-holed ------------------------------------------------------------------------
    progress(f"[{size:,}] outage (b): black hole for {args.blackhole_seconds:.0f} s")
    hole = BlackHole()
    bh_mem = Memory(Settings(state_dir=state, neo4j_uri=hole.uri))
    deadline_ms = bh_mem.settings.neo4j_deadline * 1000
    calls: list[tuple[float, float, str, str, str]] = []  # (t, ms, neo4j status, error, breaker state before)
    t_begin = time.monotonic()
    i = 0
    while time.monotonic() - t_begin < args.blackhole_seconds:
        q = queries[i % len(queries)]
        i += 1
        before = bh_mem.neo4j.breaker.snapshot().state if bh_mem.stores.neo4j_opened() is not None else "closed"
        t0 = time.perf_counter()
        r = bh_mem.recall(q, k=K)
        dt = (time.perf_counter() - t0) * 1000
        rep = r.tier("neo4j")
        calls.append((time.monotonic() - t_begin, dt, rep.status, rep.error, before))
        if args.blackhole_interval:
            time.sleep(args.blackhole_interval)
    opened_at = next((j for j, c in enumerate(calls) if "CircuitOpen" in c[3]), None)
    pre = calls[: opened_at if opened_at is not None else len(calls)]
    post = calls[opened_at:] if opened_at is not None else []
    probes = [c for c in post if "CircuitOpen" not in c[3]]
    post_fast = [c[1] for c in post if "CircuitOpen" in c[3]]
    limit = deadline_ms + BLACKHOLE_SLACK_MS
    worst = max((c[1] for c in calls), default=float("nan"))
    res.blackhole = {"pre": [c[1] for c in pre], "post_p95": pct(post_fast, 95), "max": worst, "limit": limit,
                     "probes": [c[1] for c in probes], "n": len(calls)}
    threads = sum(1 for t in threading.enumerate() if t.name.startswith("ars-neo4j"))
    out(f"### Outage (b): Neo4j black-holed (TCP accepted, never answered) for {args.blackhole_seconds:.0f} s")
    out()
    out(f"A fresh Memory whose `neo4j_uri` is {hole.uri}; fused recall called back to back "
        f"({len(calls):,} calls). Limit per call: Neo4j deadline {deadline_ms:.0f} ms + {BLACKHOLE_SLACK_MS:.0f} ms "
        f"= {limit:.0f} ms. The hole accepted {len(hole.conns)} connections; {threads} ars-neo4j pool threads exist.")
    out()
    rows = [[j + 1, f"{c[0]:.2f}", ms(c[1]), c[4], c[2], c[3][:100].replace("|", "/")] for j, c in enumerate(pre)]
    out("Calls before the breaker opened:")
    out()
    out.table(["call #", "t s", "fused ms", "breaker before", "neo4j status", "neo4j error"], rows)
    out("After it opened:")
    out()
    out.table(["calls", "what", "p50 ms", "p95 ms", "max ms"], [
        [len(post_fast), "breaker open (CircuitOpen: fast 'down')", ms(pct(post_fast, 50)), ms(pct(post_fast, 95)),
         ms(max(post_fast, default=float("nan")))],
        [len(probes), "probes (half-open: one call let through per cooldown)",
         ms(pct([c[1] for c in probes], 50)), ms(pct([c[1] for c in probes], 95)),
         ms(max((c[1] for c in probes), default=float("nan")))],
        [len(calls), "all calls", ms(pct([c[1] for c in calls], 50)), ms(pct([c[1] for c in calls], 95)), ms(worst)],
    ])
    over = [c for c in calls if c[1] > limit]
    out(f"Calls over {limit:.0f} ms: {len(over)} of {len(calls)}"
        + (": " + ", ".join(f"#{calls.index(c) + 1} {ms(c[1])} ms ({c[2]})" for c in over[:10]) if over else "") + ".")
    out()
    bh_mem.close()
    hole.close()

    memory.close()
    if args.fresh_queries > 0:
        # the server is up again after the recovery section; the series stops it for its last condition
        res.fresh = fresh_series(out, args, state, queries, server)
    server.close()
    java_peak_note = f"Neo4j JVM peak RSS {java_peak:,.0f} MiB at load"
    out(f"RSS at end of this size: Python {rss_mb()[0]:,.0f} MiB (peak {rss_mb()[1]:,.0f}); {java_peak_note}. "
        f"Load average at end of this size: {loadavg()}.")
    out()
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        out(f"Kept: {work}")
        out()
    return res


def targets(out: Out, results: list[SizeResult]) -> None:
    out("## Targets (defined at 100k episodes; printed, not asserted)")
    out()
    rows = []
    for r in results:
        s = r.series

        def line(what: str, target: str, value: float, ok: bool) -> list[str]:
            return [f"{r.size:,}", what, target, ms(value), "met" if ok else "MISSED"]

        for key, t in (("sqlite", TARGET_SQLITE_P95), ("neo4j", TARGET_NEO4J_P95), ("fused", TARGET_FUSED_P95)):
            if key not in s:  # --series fresh
                continue
            v = pct(s[key].lat, 95)
            rows.append(line(f"{key} p95", f"≤ {t:.0f} ms", v, v <= t))
        if r.stopped:
            v = pct(r.stopped.lat, 95)
            rows.append(line("Neo4j stopped: fused p95", f"≤ {TARGET_STOPPED_FUSED_P95:.0f} ms", v, v <= TARGET_STOPPED_FUSED_P95))
        if r.blackhole:
            b = r.blackhole
            rows.append(line("black-holed: slowest call (any)", f"≤ {b['limit']:.0f} ms", b["max"], b["max"] <= b["limit"]))
            rows.append(line("black-holed: p95 once the breaker is open", f"≤ {TARGET_STOPPED_FUSED_P95:.0f} ms (fast)",
                             b["post_p95"], b["post_p95"] <= TARGET_STOPPED_FUSED_P95))
        if r.fresh:
            rows.extend([f"{r.size:,}", *t] for t in fresh_targets(r.fresh))
    out.table(["size", "what", "target", "measured ms", "verdict"], rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000", help="comma-separated corpus sizes")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--warmup", type=int, default=20, help="untimed warm-up queries per system")
    ap.add_argument("--load", choices=("ingest", "direct"), default="ingest",
                    help="ingest: ingest(sync=False) for ledger+SQLite, then the sync worker for Neo4j; "
                         "direct: stream batches into each store's upsert (no ledger)")
    ap.add_argument("--batch", type=int, default=2000, help="episodes per load batch")
    ap.add_argument("--naive-budget", type=float, default=100.0,
                    help="seconds per naive system; the rest of its queries are skipped")
    ap.add_argument("--recovery-interval", type=float, default=0.25)
    ap.add_argument("--recovery-timeout", type=float, default=120.0)
    ap.add_argument("--after-recovery", type=int, default=50, help="fused calls timed after recovery")
    ap.add_argument("--blackhole-seconds", type=float, default=15.0)
    ap.add_argument("--blackhole-interval", type=float, default=0.0, help="sleep between black-hole calls")
    ap.add_argument("--series", choices=("all", "fresh", "dense"), default="all",
                    help="all: everything below; fresh: only the fresh-process-per-query series"
                         " (`ars recall --json` as a new process per query, as the CLI and agent hooks call it)")
    ap.add_argument("--fresh-queries", type=int, default=20,
                    help="timed `ars recall` processes per condition and load in the fresh-process series"
                         " (0: skip the series in --series all)")
    ap.add_argument("--fresh-warmup", type=int, default=2, help="untimed processes before each of those rows")
    ap.add_argument("--fresh-bytecode", choices=("cache", "env"), default="cache",
                    help="cache: the fresh processes cache bytecode in the work dir, as an installed ARS does"
                         " (PYTHONDONTWRITEBYTECODE dropped); env: this environment as it is")
    ap.add_argument("--workdir", default=None, help="parent of the temp work dirs (default: system temp)")
    ap.add_argument("--keep", action="store_true", help="keep the work dirs")
    ap.add_argument("--out", default=None,
                    help="also write the tables here ('' for stdout only; default"
                         " bench/out/recall_latency.txt, with --series fresh recall_latency_fresh.txt)")
    args = ap.parse_args()
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    if args.series == "dense":  # the dense tier at scale: bench/dense_latency.py (its own tables)
        import dense_latency

        for n in sizes:
            dense_latency.run(argparse.Namespace(size=n, queries=args.queries, warmup=args.warmup, seed=args.seed,
                                                 sample=400, e5_sample=60, embed_all=False, no_neo4j=False,
                                                 no_ingest_compare=False, workdir=args.workdir))
        return

    from neo4j_server import Neo4jServer

    if args.out is None:
        args.out = str(ROOT / "bench" / "out" / ("recall_latency_fresh.txt" if args.series == "fresh"
                                                 else "recall_latency.txt"))
    out = Out(Path(args.out) if args.out else None)
    machine_facts(out, args)
    t0 = time.monotonic()
    if args.series == "fresh":
        results = [SizeResult(n, fresh=run_fresh_only(out, args, n, Neo4jServer)) for n in sizes]
    else:
        results = [run_size(out, args, n, Neo4jServer) for n in sizes]
    targets(out, results)
    out(f"Total run time {(time.monotonic() - t0) / 60:.1f} min; load average at end: {loadavg()}; "
        f"peak Python RSS {rss_mb()[1]:,.0f} MiB.")


if __name__ == "__main__":
    main()
