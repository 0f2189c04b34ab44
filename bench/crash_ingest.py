"""Crash test: SIGKILL an ingesting process at random, recover, count.

    python bench/crash_ingest.py --trials 200 [--episodes 1000] [--batch 25] [--neo4j-uri URI] [--json]

Each trial: a child process ingests a corpus (one ledger fsync per batch,
printing the ids of each acknowledged batch) and is SIGKILLed at a random
moment. Then, as a person would: ``ars ingest`` the same input again and
``ars sync run``. Checked after every trial: every episode the child
acknowledged is in SQLite and in Neo4j exactly once, the ledger reads cleanly
(no corrupt line; a torn tail is ignored), each episode has exactly one
``episode.upsert`` event, and the counts match the input.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from core.config import Settings  # noqa: E402
from core.ledger.ledger import Ledger  # noqa: E402
from core.memory.memory import Memory  # noqa: E402


def write_corpus(path: Path, n: int, seed: int) -> None:
    rnd = random.Random(seed)
    words = "ledger fsync crash recovery neo4j sqlite episode memory agent loop 召回 记忆 恢复 崩溃 账本".split()
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            text = " ".join(rnd.choice(words) for _ in range(rnd.randint(20, 120)))
            fh.write(json.dumps({"id": f"crash-{i:05d}", "text": f"episode {i} {text}", "source": "jsonl",
                                 "entities": [{"name": f"agent-{i % 7}", "type": "agent"}]},
                                ensure_ascii=False) + "\n")


def child(state: str, corpus: str, batch: int, neo4j_uri: str | None) -> None:
    """Ingest, printing ``ACK id,id,...`` after each durable batch."""
    from core.ingest.pipeline import ingest

    mem = Memory(Settings(state_dir=Path(state), neo4j_uri=neo4j_uri))
    mem.recover()
    sys.stdout.write("START\n")
    sys.stdout.flush()

    def ack(ids: list[str]) -> None:
        sys.stdout.write("ACK " + ",".join(ids) + "\n")
        sys.stdout.flush()

    ingest(mem, [corpus], fmt="episodes", batch=batch, on_ack=ack)
    sys.stdout.write("DONE\n")
    sys.stdout.flush()


def ars(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tui.cli.main", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)


def trial(n: int, corpus: Path, base: Path, batch: int, uri: str | None, kill_after: float, store,
          embedder: str = "off") -> dict:
    state = base / f"t{n}"
    if store is not None:
        store.clear()
    # The subject is ledger -> SQLite -> Neo4j. The embedding consumer keeps its own cursor (its
    # crash test is tests/core/memory/test_dense.py); embedding 400 episodes per trial tripled a trial's time.
    env = {**os.environ, "ARS_STATE_DIR": str(state), "ARS_EMBEDDER": embedder}
    if uri:
        env["ARS_NEO4J_URI"] = uri
    proc = subprocess.Popen([sys.executable, __file__, "--child", str(state), str(corpus), str(batch), uri or ""],
                            stdout=subprocess.PIPE, text=True, cwd=ROOT)
    first = proc.stdout.readline()  # START: imports done, the ingest begins now
    time.sleep(kill_after)
    proc.send_signal(signal.SIGKILL)
    out, _ = proc.communicate()
    out = first + out
    acked = {i for line in out.splitlines() if line.startswith("ACK ") for i in line[4:].split(",")}
    finished = "DONE" in out
    # recover as a person would
    r1 = ars("ingest", str(corpus), "--format", "episodes", "--json", env=env)
    r2 = ars("sync", "run", "--json", env=env) if uri else None
    mem = Memory(Settings(state_dir=state, neo4j_uri=uri))
    try:
        sqlite_ids = mem.sqlite.ids()
        neo_ids = [r["id"] for r in mem.neo4j._run("MATCH (e:Episode) RETURN e.id AS id")] if uri else sqlite_ids
        ledger = Ledger(state)
        events = Counter(e.data.get("id") for e in ledger.read(types=("episode.upsert",)))
        check = ledger.check()
    finally:
        mem.close()
    expected = sum(1 for _ in open(corpus))
    lost = len(acked - set(sqlite_ids)) + len(acked - set(neo_ids))
    duplicated = (len(sqlite_ids) - len(set(sqlite_ids))) + (len(neo_ids) - len(set(neo_ids))) \
        + sum(c - 1 for c in events.values() if c > 1)
    return {
        "trial": n, "kill_after": round(kill_after, 3), "acked": len(acked), "finished": finished,
        "lost": lost, "duplicated": duplicated, "sqlite": len(set(sqlite_ids)), "neo4j": len(set(neo_ids)),
        "expected": expected, "corrupt_lines": check["corrupt"], "torn_tail": check["torn_tail"],
        "counts_match": len(set(sqlite_ids)) == expected and len(set(neo_ids)) == expected,
        "reingest_rc": r1.returncode, "sync_rc": r2.returncode if r2 else 0,
    }


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5] or None)
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--episodes", type=int, default=1000)
    ap.add_argument("--batch", type=int, default=25)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--neo4j-uri")
    ap.add_argument("--no-neo4j", action="store_true")
    ap.add_argument("--json", action="store_true", help="print one JSON summary line")
    ap.add_argument("--embedder", default="off", help="ARS_EMBEDDER for the recovery commands (off: not the subject)")
    args = ap.parse_args()
    rnd = random.Random(args.seed)
    server = store = None
    uri = None
    if not args.no_neo4j:
        uri = args.neo4j_uri
        if not uri:
            from neo4j_server import Neo4jServer

            server = Neo4jServer()
            uri = server.start()
        from core.memory.tiers.neo4j import Neo4jStore

        store = Neo4jStore(uri)
    results = []
    try:
        with tempfile.TemporaryDirectory(prefix="ars-crash-") as tmp:
            base = Path(tmp)
            corpus = base / "corpus.jsonl"
            write_corpus(corpus, args.episodes, args.seed)
            # calibrate: how long an uninterrupted ingest takes (warm), so kills land in every phase
            for i in range(2):
                if store is not None:
                    store.clear()
                proc = subprocess.Popen([sys.executable, __file__, "--child", str(base / f"calib{i}"), str(corpus),
                                         str(args.batch), uri or ""], stdout=subprocess.PIPE, text=True, cwd=ROOT)
                proc.stdout.readline()
                t0 = time.monotonic()
                acks_done = 0.0
                for line in proc.stdout:  # the last ACK ends the ledger+SQLite phase; then the Neo4j sync
                    if line.startswith("ACK "):
                        acks_done = time.monotonic() - t0
                proc.wait()
                full = time.monotonic() - t0
            for n in range(args.trials):
                # half the kills inside the ledger+SQLite phase, half in the sync or after it
                delay = rnd.uniform(0.0, acks_done) if n % 2 == 0 else rnd.uniform(acks_done, full * 1.05)
                r = trial(n, corpus, base, args.batch, uri, delay, store, args.embedder)
                results.append(r)
                if not args.json:
                    print(json.dumps(r), flush=True)
    finally:
        if store is not None:
            store.close()
        if server is not None:
            server.close()
    summary = {
        "trials": len(results),
        "killed_before_done": sum(1 for r in results if not r["finished"]),
        "acked_total": sum(r["acked"] for r in results),
        "lost": sum(r["lost"] for r in results),
        "duplicated": sum(r["duplicated"] for r in results),
        "counts_mismatch": sum(1 for r in results if not r["counts_match"]),
        "corrupt_lines": sum(r["corrupt_lines"] for r in results),
        "torn_tails_seen": sum(r["torn_tail"] for r in results),
        "recovery_failures": sum(1 for r in results if r["reingest_rc"] or r["sync_rc"]),
        "child_seconds_uninterrupted": round(full, 2),
        "ledger_sqlite_phase_seconds": round(acks_done, 2),
    }
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"\nuninterrupted child: {full:.2f}s, of which ledger+SQLite {acks_done:.2f}s (then the Neo4j sync)")
        print("\n| trials | killed mid-run | acked episodes | lost | duplicated | count mismatches | corrupt lines | recovery failures |")
        print("|---|---|---|---|---|---|---|---|")
        print(f"| {summary['trials']} | {summary['killed_before_done']} | {summary['acked_total']} | {summary['lost']} "
              f"| {summary['duplicated']} | {summary['counts_mismatch']} | {summary['corrupt_lines']} "
              f"| {summary['recovery_failures']} |")


if __name__ == "__main__":
    main()
