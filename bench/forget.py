"""`ars forget` at scale, and its propagation to a team host.

1. A state of N episodes (default 100,000, the seeded synthetic corpus) plus
   one session of 500 episodes; then, each as the person runs it (a fresh
   `ars forget ... --yes` process, wall clock) and in-process (the API call):
   * forget one episode;
   * forget the 500-episode session.
   After each: the forgotten text is looked for in every file of the state.
2. Propagation (needs Neo4j: ARS_NEO4J_URI, or the launcher in scripts/neo4j):
   host A syncs a smaller state, host B pulls it; A forgets one episode; the
   time of A's next `sync run` (the graph drops it) and of B's next pull
   (its copy goes), and whether B still holds it.

    .venv/bin/python bench/forget.py [--episodes 100000] [--no-neo4j]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "bench"))

from core.api import ARS  # noqa: E402
from core.config import Settings  # noqa: E402
from synthetic import write_corpus  # noqa: E402

ARS_BIN = Path(sys.executable).parent / "ars"
SESSION = "bench-forget-session"


def session_rows(n: int = 500) -> list[dict]:
    return [{"id": f"manual:{SESSION}:{i}", "source": "manual", "session_id": SESSION,
             "summary": f"session part {i}", "text": f"marker{i}x forgetme{i}q notes about part {i} of the session",
             "first_ts": f"2026-11-01T10:{i // 60:02d}:{i % 60:02d}+00:00"} for i in range(n)]


def holders(state: Path, needle: bytes) -> list[str]:
    return [str(p.relative_to(state)) for p in sorted(state.rglob("*")) if p.is_file() and needle in p.read_bytes()]


def cli(state: Path, *args: str) -> tuple[float, subprocess.CompletedProcess]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARS_")}
    env.update({"ARS_STATE_DIR": str(state), "ARS_EMBEDDER": "off"})
    t = time.perf_counter()
    p = subprocess.run([str(ARS_BIN), *args], capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL,
                       start_new_session=True, timeout=600)
    return time.perf_counter() - t, p


def build(base: Path, n: int) -> Path:
    state = base / "state"
    corpus = base / "corpus.jsonl"
    write_corpus(corpus, n, seed=7)
    sess = base / "session.jsonl"
    sess.write_text("".join(json.dumps(r) + "\n" for r in session_rows()))
    t = time.perf_counter()
    ars = ARS(Settings(state_dir=state, embedder="off"))
    try:
        ars.ingest([corpus, sess], fmt="episodes")
    finally:
        ars.close()
    print(f"built a state of {n + 500:,} episodes in {time.perf_counter() - t:.1f} s "
          f"(ledger {(state / 'ledger.jsonl').stat().st_size / 1e6:.0f} MB, "
          f"memory.sqlite {(state / 'memory.sqlite').stat().st_size / 1e6:.0f} MB)", file=sys.stderr)
    return state


def local_rows(state: Path, corpus_first_id: str) -> list[tuple[str, str, str, str]]:
    rows = []
    secs, p = cli(state, "forget", corpus_first_id, "--yes", "--why", "bench")
    assert p.returncode == 0, p.stderr
    rows.append(("forget 1 episode (ars forget, fresh process)", f"{secs:.2f} s", "≤ 2 s", _first(p.stdout)))
    secs, p = cli(state, "forget", "--session", SESSION, "--yes", "--why", "bench")
    assert p.returncode == 0, p.stderr
    left = holders(state, b"forgetme17q")
    rows.append(("forget a 500-episode session (fresh process)", f"{secs:.2f} s", "≤ 10 s",
                 _first(p.stdout) + ("; text left in " + ",".join(left) if left else "; no file holds its text")))
    return rows


def inproc_rows(state: Path, ep_id: str) -> list[tuple[str, str, str, str]]:
    from core.govern import forget as F

    ars = ARS(Settings(state_dir=state, embedder="off"))
    try:
        t = time.perf_counter()
        sel = F.select(ars.memory, ids=[ep_id])
        rep = F.forget(ars.memory, sel, why="bench")
        secs = time.perf_counter() - t
    finally:
        ars.close()
    from core.infra.sqlite_lib import VERSION

    merge = getattr(ars.memory.sqlite, "forget_merge_seconds", None)
    how = (f"SQLite {VERSION}: no safe FTS5 secure-delete, so the old postings go only with a merge"
           if merge is not None else f"SQLite {VERSION}: FTS5 secure-delete, no merge")
    return [("forget 1 episode (in-process API call)", f"{secs:.2f} s", "-", rep.removed.get("ledger", "")),
            ("  of which the FTS5 index merge (optimize)", "-" if merge is None else f"{merge:.2f} s", "-", how)]


def _first(stdout: str) -> str:
    return next((line for line in stdout.splitlines() if line.startswith("forgot")), "").split(" (")[0]


def propagation(base: Path, n: int, uri: str) -> list[tuple[str, str, str, str]]:
    from core.govern import forget as F
    from core.ingest.pipeline import ingest
    from core.memory.memory import Memory
    from core.consumers.team_pull import pull

    corpus = base / "team.jsonl"
    write_corpus(corpus, n, seed=11)
    a = Memory(Settings(state_dir=base / "a", neo4j_uri=uri, host_id="bench-a", embedder="off"))
    (base / "b").mkdir()
    b = Memory(Settings(state_dir=base / "b", neo4j_uri=uri, host_id="bench-b", embedder="off"))
    try:
        a.neo4j.clear()
        ingest(a, [corpus], fmt="episodes")
        assert a.sync_neo4j(max_seconds=600).ok
        assert b.sync_neo4j(max_seconds=600).ok
        ep = a.sqlite.ids()[n // 2]
        assert b.sqlite.has(ep)
        F.forget(a, F.select(a, ids=[ep]), why="bench")
        t = time.perf_counter()
        rep = a.sync_neo4j(max_seconds=600)
        t_sync = time.perf_counter() - t
        graph_has = a.neo4j.has(ep)
        t = time.perf_counter()
        pr = pull(b)
        t_pull = time.perf_counter() - t
        return [
            (f"A's next sync run drops it from Neo4j ({n:,} episodes)", f"{t_sync:.2f} s", "-",
             f"ok={rep.ok}; still in graph: {graph_has}"),
            ("B's next pull drops its copy", f"{t_pull:.2f} s", "-",
             f"dropped {pr.dropped}; B still has it: {b.sqlite.has(ep)}"),
        ]
    finally:
        a.close()
        b.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--episodes", type=int, default=100_000)
    ap.add_argument("--team-episodes", type=int, default=5_000)
    ap.add_argument("--no-neo4j", action="store_true")
    ap.add_argument("--keep", type=Path, help="build the state here once and copy it for each run "
                                              "(the build takes minutes at 100k)")
    ap.add_argument("--neo4j-uri", default=os.environ.get("ARS_NEO4J_URI"))
    args = ap.parse_args()
    rows: list[tuple[str, str, str, str]] = []
    with tempfile.TemporaryDirectory(prefix="ars-forget-") as tmp:
        base = Path(tmp)
        if args.keep is not None:
            import shutil

            if not (args.keep / "state" / "ledger.jsonl").exists():
                args.keep.mkdir(parents=True, exist_ok=True)
                build(args.keep, args.episodes)
            state = base / "state"
            shutil.copytree(args.keep / "state", state)
        else:
            state = build(base, args.episodes)
        ars = ARS(Settings(state_dir=state, embedder="off"))
        ids = ars.memory.sqlite.ids()
        ars.close()
        rows += local_rows(state, ids[args.episodes // 2])
        rows += inproc_rows(state, ids[args.episodes // 3])
        if not args.no_neo4j:
            server = None
            uri = args.neo4j_uri
            if uri is None:
                from neo4j_server import Neo4jServer

                server = Neo4jServer()
                uri = server.start()
            try:
                rows += propagation(base, args.team_episodes, uri)
            finally:
                if server is not None:
                    server.close()
    print(f"\n{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}\n")
    w = max(len(r[0]) for r in rows)
    print(f"| {'what'.ljust(w)} | time | target | result |")
    print(f"|{'-' * (w + 2)}|------|--------|--------|")
    for r in rows:
        print(f"| {r[0].ljust(w)} | {r[1]} | {r[2]} | {r[3]} |")


if __name__ == "__main__":
    main()
