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


def build_openclaw(home: Path, events: int, sessions: int, seed: int = 7, legacy: Path | None = None) -> None:
    """The store; with ``legacy``, the same sessions as pre-2026.8 JSONL files there too (the baseline)."""
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
        if legacy is not None:
            store.write_jsonl(legacy / "agents" / "main" / "sessions" / f"{sid}.jsonl", evs)
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
    started = time.perf_counter()
    proc = subprocess.Popen([str(ROOT / ".venv" / "bin" / "ars"), "ingest", str(path), "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    out, err = proc.stdout.read(), proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)  # this child's own peak RSS
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"ars ingest failed ({proc.returncode}): {err.strip()[:500]}")
    return wall, usage.ru_maxrss / 1024, json.loads(out)


def read_only_rate(kind: str, path: Path, events: int) -> int:
    """Events/s of reading the store into episodes alone (no redaction, enrichment or storage)."""
    sys.path.insert(0, str(ROOT))
    from core.ingest.formats.parsed import Parsed
    from core.ingest.stores import hermes_db, openclaw_db
    from core.ingest.stores.layout import OpenClawAgent

    parsed = Parsed()
    started = time.perf_counter()
    if kind == "openclaw":
        agent = OpenClawAgent(path / "agents" / "main")
        sessions = openclaw_db.list_sessions(agent)
        for i in range(0, len(sessions), 50):
            chunk = sessions[i:i + 50]
            pre = openclaw_db.preload(agent, chunk)
            for s in chunk:
                for _ in openclaw_db.session_episodes(agent, s, parsed, pre):
                    pass
    else:
        ids = list(hermes_db.list_sessions(path))
        for i in range(0, len(ids), 200):
            for session, rows in hermes_db.read_sessions(path, ids[i:i + 200]):
                for _ in hermes_db.session_episodes(path, session, rows, parsed):
                    pass
    return round(events / (time.perf_counter() - started))


def measure(name: str, path: Path, events: int, append, kind: str = "") -> dict:
    with tempfile.TemporaryDirectory(prefix="ars-bench-state-") as state:
        first, rss, report = ars_ingest(path, Path(state))
        again, _, same = ars_ingest(path, Path(state))
        append()
        grown, _, one = ars_ingest(path, Path(state))
    return {"store": name, "events": events, "episodes": report["episodes_added"], "first_s": round(first, 2),
            "read_only_events_per_s": read_only_rate(kind, path, events) if kind else "-",
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
        legacy = Path(tmp) / "legacy" / ".openclaw"
        build_openclaw(home, args.events, args.sessions, legacy=legacy)
        oc = OpenClawStore(home)

        def oc_append() -> None:
            oc.add_events("bench-00000", [user("bench-extra", f"bench-00000-{args.events // args.sessions - 2}", "one more question", 59)])
            oc.checkpoint()
        rows.append(measure("openclaw", home, args.events, oc_append, "openclaw"))
        first_legacy = legacy / "agents" / "main" / "sessions" / "bench-00000.jsonl"
        rows.append(measure("openclaw legacy JSONL (baseline)", legacy, args.events, lambda: first_legacy.open("a").write(
            json.dumps(user("bench-extra", f"bench-00000-{args.events // args.sessions - 2}", "one more", 59)) + "\n")))
        hermes = Path(tmp) / ".hermes" / "state.db"
        build_hermes(hermes, args.events, args.sessions)
        rows.append(measure("hermes", hermes, args.events,
                            lambda: HermesStore(hermes).message("2026_00000", "user", "one more", T0 + 9_999), "hermes"))
    if args.json:
        print(json.dumps(rows))
        return
    cols = ["store", "events", "episodes", "first_s", "events_per_s", "read_only_events_per_s", "peak_rss_mb",
            "unchanged_ms",
            "unchanged_added", "one_more_ms", "one_more_added"]
    print(" | ".join(cols))
    for r in rows:
        print(" | ".join(str(r[c]) for c in cols))
    print("targets: events_per_s >= 5000; unchanged_ms <= 200 (a fresh `ars ingest` process, wall clock); "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
