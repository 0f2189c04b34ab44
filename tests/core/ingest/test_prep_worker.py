"""A long ingest's next batches are redacted and tokenised by a worker process
(core/ingest/prep_worker.py): what is stored is the same as when this process
does it, secrets never get through, and a worker that dies loses nothing.

Real parts: a real worker process (spawn), real ledger and SQLite files.
"""

from __future__ import annotations

import json
import os
import signal

from conftest import make_memory, write_episodes
from core.ingest import prep_worker
from core.ingest.pipeline import ingest
from core.ingest.prep_worker import PrepWorker, prepare
from core.memory.text import index_text
from core.models import Episode

KEY = "sk-ant-api03-" + "Q7x9Lm2Vb8Nc4Zr6Tp1Wq3Ys5Ud7Fg9Hj2Kl4Mn6Bv8Cx0Az" + "-AbCdEfGh"


def rows(n: int) -> list[dict]:
    return [{"id": f"manual:s{i // 50}:{i % 50}", "source": "manual", "session_id": f"s{i // 50}",
             "summary": f"step {i}", "first_ts": f"2026-11-0{1 + i // 1000}T10:{(i // 60) % 60:02d}:{i % 60:02d}+00:00",
             "text": (f"deployed with ANTHROPIC_API_KEY={KEY} set" if i % 97 == 5 else
                      f"会议记录 {i}: the otter ledger was reconciled by hand, 检查了第{i}行")}
            for i in range(n)]


def test_a_long_ingest_stores_what_this_process_would(tmp_path):
    src = write_episodes(tmp_path / "eps.jsonl", rows(600))
    memory = make_memory(tmp_path / "state")
    rep = ingest(memory, [src], fmt="episodes", sync=False, batch=50)  # 12 batches: 10 go through the worker
    assert rep.episodes_added == 600
    conn = memory.sqlite.team()
    stored = conn.execute("SELECT e.id, e.summary, e.text, e.topics, e.entities, f.terms FROM episodes e "
                          "JOIN episodes_fts f ON f.rowid = e.rowid ORDER BY e.rowid").fetchall()
    assert len(stored) == 600
    for eid, summary, text, topics, entities, terms in stored:
        ep = Episode(id=eid, source="manual", summary=summary, text=text, topics=json.loads(topics),
                     entities=json.loads(entities))
        assert terms == index_text(ep.search_text()), eid  # the worker's terms are this process's
        assert KEY not in text and "sk-ant" not in terms
    raw = (tmp_path / "state" / "ledger.jsonl").read_bytes()
    assert KEY.encode() not in raw and raw.count(b"[secret:") >= 6
    assert [h.episode_id for h in memory.recall("otter ledger 检查了第577行", k=1).hits] == ["manual:s11:27"]
    memory.close()


def test_the_worker_prepares_ahead_in_order_and_small_streams_never_start_it():
    eps = [Episode.model_validate(r) for r in rows(40)]
    chunks = [eps[i:i + 4] for i in range(0, 40, 4)]
    prep = PrepWorker()
    got = list(prep.batches(chunks[:prep_worker.IN_PROCESS]))
    assert prep.pid is None and len(got) == prep_worker.IN_PROCESS  # a session file's worth: no process
    got = list(prep.batches(chunks))
    assert prep.pid is not None and not prep.broken
    assert [[e.id for e in c] for c, _t in got] == [[e.id for e in c] for c in chunks]
    assert got == [prepare(c) for c in chunks]
    prep.close()


def test_a_worker_killed_mid_ingest_loses_nothing():
    eps = [Episode.model_validate(r) for r in rows(60)]
    chunks = [eps[i:i + 5] for i in range(0, 60, 5)]
    prep = PrepWorker()
    out = []
    for i, (chunk, terms) in enumerate(prep.batches(chunks)):
        out.append((chunk, terms))
        if i == prep_worker.IN_PROCESS:  # the worker holds the next batches now
            os.kill(prep.pid, signal.SIGKILL)
    assert prep.broken
    assert [e.id for c, _t in out for e in c] == [e.id for e in eps]
    assert out == [prepare(c) for c in chunks]  # the batches it held were prepared here
    prep.close()


CHILD = """
import sys
sys.path.insert(0, sys.argv[3])
from conftest import make_memory
from core.ingest.pipeline import ingest
from pathlib import Path
memory = make_memory(Path(sys.argv[1]))
print("START", flush=True)
ingest(memory, [sys.argv[2]], fmt="episodes", sync=False, batch=20, on_ack=lambda ids: print("ACK", flush=True))
print("DONE", flush=True)
"""


def test_an_ingest_killed_with_its_worker_running_leaves_nothing_behind(tmp_path):
    """SIGKILL mid-ingest: the worker sees its request pipe close and exits; it never held the
    caller's stdout, so whoever reads the ingest's output gets EOF (a pool's orphans held it forever)."""
    import subprocess
    import sys
    import time
    from pathlib import Path

    src = write_episodes(tmp_path / "eps.jsonl", rows(3000))
    tests = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path / "state"), str(src), str(tests)],
                            stdout=subprocess.PIPE, text=True, cwd=tests.parent)
    assert proc.stdout.readline().strip() == "START"
    acks = 0
    while acks < prep_worker.IN_PROCESS + 3:  # the worker is working ahead by now
        acks += proc.stdout.readline().strip() == "ACK"
    workers = [p for p in _children(proc.pid)]
    assert workers, "the worker process was started"
    proc.kill()
    t0 = time.monotonic()
    rest = proc.stdout.read()  # EOF: nothing else holds the pipe
    proc.wait()
    assert time.monotonic() - t0 < 30 and "DONE" not in rest
    deadline = time.monotonic() + 30
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(pid) for pid in workers), "the worker exited with its ingest"


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = open(f"/proc/{entry}/stat").read()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry))
    return out


def _alive(pid: int) -> bool:
    try:
        state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
