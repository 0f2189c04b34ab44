"""The write-ahead ledger, recovery, deferred sync to Neo4j, rebuild, crashes."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from core.api import ARS
from core.config import Settings
from core.ingest.pipeline import ingest
from core.ledger.ledger import Event, Ledger, content_id
from core.models import Episode

from conftest import SAMPLE, make_memory, write_episodes

ROOT = Path(__file__).resolve().parents[2]


def ev(i: int) -> Event:
    return Event(content_id("t", i), "test", {"i": i})


def test_ledger_group_commit_and_read_back(state_dir):
    led = Ledger(state_dir)
    start, end = led.append([ev(1), ev(2), ev(3)])
    assert start == 0 and end == led.size()
    assert [e.data["i"] for e in led.read()] == [1, 2, 3]
    entries = list(led.read())
    assert [e.data["i"] for e in led.read(entries[1].end)] == [3]


def test_torn_last_line_is_ignored_then_repaired(state_dir):
    led = Ledger(state_dir)
    led.append([ev(1)])
    with open(led.path, "ab") as fh:
        fh.write(b'{"event_id": "t:torn", "type": "test", "da')  # power cut mid-write
    assert [e.data["i"] for e in led.read()] == [1]
    assert led.check() == {"events": 1, "corrupt": 0, "torn_tail": 1}
    led.append([ev(2)])
    assert [e.data["i"] for e in led.read()] == [1, 2]
    assert led.check() == {"events": 2, "corrupt": 0, "torn_tail": 0}


def test_concurrent_appends_from_processes_never_interleave(state_dir):
    code = (
        "import sys; sys.path.insert(0, %r)\n"
        "from core.ledger.ledger import Ledger, Event\n"
        "led = Ledger(%r)\n"
        "for i in range(200): led.append([Event(f'p{sys.argv[1]}-{i}', 'test', {'pad': 'x' * 3000})])\n"
    ) % (str(ROOT), str(state_dir))
    procs = [subprocess.Popen([sys.executable, "-c", code, str(n)]) for n in range(3)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    led = Ledger(state_dir)
    assert led.check() == {"events": 600, "corrupt": 0, "torn_tail": 0}


def test_crash_between_ledger_and_sqlite_is_recovered_on_open(state_dir):
    led = Ledger(state_dir)
    ep = Episode(id="e-crash", text="acknowledged before the crash")
    led.append([Event(content_id("ep", ep.model_dump(mode="json")), "episode.upsert", ep.model_dump(mode="json"))])
    with ARS(Settings(state_dir=state_dir)) as ars:  # startup applies what SQLite missed
        assert ars.memory.sqlite.has("e-crash")
        assert ars.recall("acknowledged crash").hits[0].episode_id == "e-crash"


def test_rebuild_sqlite_from_the_ledger(state_dir):
    with ARS(Settings(state_dir=state_dir)) as ars:
        ars.ingest([SAMPLE])
        before = sorted(ars.memory.sqlite.ids())
    (state_dir / "memory.sqlite").unlink()
    with ARS(Settings(state_dir=state_dir)) as ars:
        ars.rebuild()
        assert sorted(ars.memory.sqlite.ids()) == before
        assert ars.recall("Alice weekly plan").hits[0].episode_id == "hermes:h-88:0"


def test_incremental_ingest_of_appended_lines(state_dir, tmp_path):
    f = tmp_path / "chat.jsonl"
    lines = [{"role": "user", "content": f"message {i} about the ledger", "session_id": f"s{i}",
              "timestamp": "2026-11-01T10:00:00Z"} for i in range(3)]
    write_episodes(f, lines)
    mem = make_memory(state_dir)
    r1 = ingest(mem, [f])
    assert r1.episodes_added == 3
    r2 = ingest(mem, [f])
    assert r2.unchanged_files == 1 and r2.episodes_added == 0
    with open(f, "a") as fh:
        fh.write(json.dumps({"role": "assistant", "content": "a new answer", "session_id": "s9",
                             "timestamp": "2026-11-01T10:05:00Z"}) + "\n")
    r3 = ingest(mem, [f])
    assert r3.episodes_added == 1 and r3.duplicates_skipped == 3
    events = list(mem.ledger.read(types=("episode.upsert",)))
    assert len(events) == 4  # nothing written twice
    mem.close()


def test_neo4j_outage_mid_ingest_loses_nothing(neo4j_server, neo4j_uri, state_dir, tmp_path):
    mem = make_memory(state_dir, neo4j_uri=neo4j_uri)
    first = write_episodes(tmp_path / "a.jsonl", [{"id": f"a{i}", "text": f"before outage {i}"} for i in range(20)])
    second = write_episodes(tmp_path / "b.jsonl", [{"id": f"b{i}", "text": f"during outage {i}"} for i in range(30)])
    ingest(mem, [first])
    assert mem.sync.status()["drift"] == 0
    neo4j_server.stop()
    try:
        t0 = time.monotonic()
        report = ingest(mem, [second])  # acknowledged by the ledger and SQLite alone
        assert report.episodes_added == 30
        assert report.sync is not None and report.sync["ok"] is False
        assert time.monotonic() - t0 < 30
        status = mem.sync.status()
        assert status["pending"] == 30 and status["failed"] >= 1 and status["last_error"]
        assert mem.sqlite.count() == 50
        r = mem.recall("during outage")  # SQLite answers; Neo4j stands by
        assert not r.degraded and r.tier("sqlite").status == "ok"
        assert r.hits and all("during outage" in h.snippet for h in r.hits[:5])  # written during the outage
        asked = mem.recall("during outage", tiers="neo4j,sqlite")
        assert asked.degraded and asked.hits and asked.tier("neo4j").status in ("down", "error", "timeout")
    finally:
        neo4j_server.start()
    mem2 = make_memory(state_dir, neo4j_uri=neo4j_uri)
    report = mem2.sync.run()
    assert report.ok and report.pending == 0
    status = mem2.sync.status()
    assert status["drift"] == 0 and status["counts"] == {"sqlite": 50, "neo4j": 50} and status["failed"] == 0
    mem.close()
    mem2.close()


def test_backfill_rebuilds_neo4j(memory_neo4j):
    ingest(memory_neo4j, [SAMPLE])
    memory_neo4j.neo4j.clear()
    assert memory_neo4j.sync.status()["drift"] == 10
    report = memory_neo4j.sync.backfill()
    assert report.ok and report.applied == 10
    assert memory_neo4j.sync.status()["drift"] == 0


def test_watch_ingests_changes_and_finalises_idle_sessions(state_dir, tmp_path):
    folder = tmp_path / "sessions"
    folder.mkdir()
    mem = make_memory(state_dir)
    reports, finalised = [], []
    from core.ingest.watch import Watcher

    w = Watcher(mem, [folder], idle_seconds=1.0, on_report=reports.append, on_finalized=finalised.append)
    t = threading.Thread(target=w.run, daemon=True)
    t.start()
    time.sleep(1.0)
    write_episodes(folder / "live.jsonl", [{"id": "w1", "text": "watched episode one"}])
    deadline = time.monotonic() + 20
    while not finalised and time.monotonic() < deadline:
        time.sleep(0.2)
    w.stop_event.set()
    t.join(timeout=10)
    assert mem.sqlite.has("w1")
    assert [p.name for p in finalised] == ["live.jsonl"]
    fin = list(mem.ledger.read(types=("session.finalized",)))
    assert fin and fin[0].data["episodes"] == ["w1"]
    mem.close()


@pytest.mark.timeout_budget
def test_crash_ingest_20_trials(neo4j_server, neo4j_uri):
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "crash_ingest.py"), "--trials", "20", "--episodes",
                        "400", "--batch", "20", "--neo4j-uri", neo4j_uri, "--json"],
                       capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-2000:]
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert summary["trials"] == 20
    assert summary["killed_before_done"] >= 5  # the kills really interrupted ingests
    assert summary["lost"] == 0 and summary["duplicated"] == 0
    assert summary["counts_mismatch"] == 0 and summary["corrupt_lines"] == 0 and summary["recovery_failures"] == 0
