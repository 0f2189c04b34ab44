"""Ingest speed of agents' own stores: an OpenClaw agent database and a Hermes state.db.

    python bench/agent_stores.py [--events 100000] [--sessions 500] [--json]

For each store: build it (from the agents' published schemas, tests/fixtures/agent_stores), then
time a fresh ``ars ingest`` process on it (events/s, peak RSS of that process), then a second
fresh ``ars ingest`` when nothing changed (wall clock), then one after a single event was
appended (only that session is read again). Targets: >= 5,000 events/s; a no-change
re-ingest <= 200 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "agent_stores"))

from hermes_store import T0, HermesStore  # noqa: E402
from openclaw_store import OpenClawStore, assistant, connect, header, user  # noqa: E402

WORDS = ("deploy billing staging rollback nginx edge config vault secret grafana port kubernetes quota "
         "sourdough hydration rye invoice ledger sqlite wal zstd archive cursor 记忆 恢复 召回").split()


def sentence(rnd: random.Random) -> str:
    return " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(8, 40)))


def build_openclaw(home: Path, events: int, sessions: int, seed: int = 7) -> None:
    rnd = random.Random(seed)
    store = OpenClawStore(home).create()
    per = events // sessions
    conn = connect(store.db)
    for s in range(sessions):
        sid = f"bench-{s:05d}"
        evs = [header(sid)]
        parent = None
        for i in range(per - 1):
            eid = f"{sid}-{i}"
            minute = (i // 4) % 60
            evs.append(user(eid, parent, sentence(rnd), minute) if i % 2 == 0
                       else assistant(eid, parent, sentence(rnd), minute))
            parent = eid
        store.add_events(sid, evs, compress="alternate", conn=conn)
    conn.commit()
    conn.close()
    store.checkpoint()


def build_hermes(path: Path, events: int, sessions: int, seed: int = 7) -> None:
    rnd = random.Random(seed)
    store = HermesStore(path).create()
    conn = store.connect()
    per = events // sessions
    for s in range(sessions):
        sid = f"2026_{s:05d}"
        store.session(sid, source="telegram" if s % 3 else "cli", title=f"bench {s}", conn=conn)
        for i in range(per):
            store.message(sid, "user" if i % 2 == 0 else "assistant", sentence(rnd), T0 + s * 10_000 + i * 30,
                          conn=conn)
    conn.commit()
    conn.close()


def ars_ingest(path: Path, state: Path) -> tuple[float, float, dict]:
    """(wall seconds, peak RSS MB of the child, report) of one fresh ``ars ingest`` process."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARS_")}
    env.update(ARS_STATE_DIR=str(state), ARS_NEO4J_URI="", ARS_EMBEDDER="off")
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    r = subprocess.run([str(ROOT / ".venv" / "bin" / "ars"), "ingest", str(path), "--json"],
                       capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    if r.returncode != 0:
        raise SystemExit(f"ars ingest failed ({r.returncode}): {r.stderr.strip()[:500]}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, max(peak, before) / 1024, json.loads(r.stdout)


def measure(name: str, path: Path, events: int, append) -> dict:
    with tempfile.TemporaryDirectory(prefix="ars-bench-state-") as state:
        first, rss, report = ars_ingest(path, Path(state))
        again, _, same = ars_ingest(path, Path(state))
        append()
        grown, _, one = ars_ingest(path, Path(state))
    return {"store": name, "events": events, "episodes": report["episodes_added"], "first_s": round(first, 2),
            "events_per_s": round(events / first), "peak_rss_mb": round(rss), "unchanged_ms": round(again * 1000),
            "unchanged_added": same["episodes_added"], "one_more_ms": round(grown * 1000),
            "one_more_added": one["episodes_added"]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--sessions", type=int, default=500)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="ars-bench-stores-") as tmp:
        home = Path(tmp) / ".openclaw"
        build_openclaw(home, args.events, args.sessions)
        oc = OpenClawStore(home)

        def oc_append() -> None:
            oc.add_events("bench-00000", [user("bench-extra", f"bench-00000-{args.events // args.sessions - 2}", "one more question", 59)])
            oc.checkpoint()
        rows.append(measure("openclaw", home, args.events, oc_append))
        hermes = Path(tmp) / ".hermes" / "state.db"
        build_hermes(hermes, args.events, args.sessions)
        rows.append(measure("hermes", hermes, args.events,
                            lambda: HermesStore(hermes).message("2026_00000", "user", "one more", T0 + 9_999)))
    if args.json:
        print(json.dumps(rows))
        return
    cols = ["store", "events", "episodes", "first_s", "events_per_s", "peak_rss_mb", "unchanged_ms",
            "unchanged_added", "one_more_ms", "one_more_added"]
    print(" | ".join(cols))
    for r in rows:
        print(" | ".join(str(r[c]) for c in cols))
    print("targets: events_per_s >= 5000; unchanged_ms <= 200 (a fresh `ars ingest` process, wall clock)")


if __name__ == "__main__":
    main()
