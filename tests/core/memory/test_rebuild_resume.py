"""``ars rebuild`` and ``ars sync backfill`` at a million episodes take minutes:
each reports its progress after every batch, and one that was stopped (Ctrl-C,
a crash, Neo4j gone) goes on from where it was instead of starting over.

Real parts: a real ledger and SQLite files, a real Neo4j over Bolt, the CLI.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import make_memory
from core.memory import apply
from core.models import Episode

ROOT = Path(__file__).resolve().parents[3]


def episodes(n: int) -> list[Episode]:
    return [Episode(id=f"manual:s{i // 20}:{i % 20}", source="manual", session_id=f"s{i // 20}",
                    text=f"step {i}: the heron count at pond {i % 7} was {i * 3}",
                    first_ts=f"2026-11-01T10:{(i // 60) % 60:02d}:{i % 60:02d}+00:00") for i in range(n)]


class Stop(KeyboardInterrupt):
    """Ctrl-C in the middle of a long command."""


def stop_after(calls: int, seen: list):
    def step(done: int, total: int) -> None:
        seen.append((done, total))
        if len(seen) == calls:
            raise Stop

    return step


def test_a_stopped_rebuild_goes_on_where_it_was(state_dir, monkeypatch):
    monkeypatch.setattr(apply, "BATCH", 50)
    memory = make_memory(state_dir)
    memory.store(episodes(400))
    size = memory.ledger.size()
    seen: list = []
    with pytest.raises(Stop):
        memory.rebuild_sqlite(stop_after(3, seen))
    assert [t for _d, t in seen] == [size] * 3 and seen[0][0] < seen[1][0] < seen[2][0] < size
    assert memory.sqlite.count() == 400  # the old store answers meanwhile
    stopped_at, seen = seen[-1][0], []
    applied = memory.rebuild_sqlite(lambda d, t: seen.append((d, t)))
    assert memory.rebuild_resumed_at == stopped_at and applied == 250
    assert seen[0][0] > stopped_at
    assert memory.sqlite.count() == 400
    assert [h.episode_id for h in memory.recall("heron count 1197", k=1).hits] == ["manual:s19:19"]
    assert len(memory.sqlite.ledger_lines(["manual:s0:3"])[0]) == 1  # the index of ledger lines is whole
    # a rebuild that finished leaves nothing to go on from: the next one starts over
    assert memory.rebuild_sqlite() == 400 and memory.rebuild_resumed_at == 0
    memory.close()


def test_a_torn_leftover_is_rebuilt_from_the_start(state_dir):
    memory = make_memory(state_dir)
    memory.store(episodes(30))
    (state_dir / "memory.sqlite.new").write_bytes(b"not a database at all" * 100)
    assert memory.rebuild_sqlite() == 30 and memory.rebuild_resumed_at == 0
    assert memory.sqlite.count() == 30
    memory.close()


def test_a_stopped_backfill_goes_on_where_it_was(state_dir, neo4j_uri, monkeypatch):
    from core.consumers import neo4j_push

    monkeypatch.setattr(neo4j_push, "WRITE_BATCH", 100)
    memory = make_memory(state_dir, neo4j_uri=neo4j_uri)
    memory.store(episodes(450))
    seen: list = []
    with pytest.raises(Stop):
        memory.sync.backfill(clear=True, progress=stop_after(2, seen))
    assert seen == [(100, 450), (200, 450)]
    assert json.loads((state_dir / "sync.json").read_text())["neo4j"]["backfill_rowid"] == 200
    seen = []
    report = memory.sync.backfill(progress=lambda d, t: seen.append((d, t)))
    assert report.ok and report.resumed == 200 and report.applied == 250
    assert seen == [(300, 450), (400, 450), (450, 450)]
    assert memory.neo4j.count() == 450
    assert json.loads((state_dir / "sync.json").read_text())["neo4j"]["backfill_rowid"] == 0  # done
    # --clear starts over
    report = memory.sync.backfill(clear=True)
    assert report.ok and report.resumed == 0 and report.applied == 450 and memory.neo4j.count() == 450
    memory.close()


def test_cli_rebuild_says_where_it_went_on_from(state_dir, monkeypatch):
    memory = make_memory(state_dir)
    memory.store(episodes(40))
    memory.close()
    env = {"ARS_STATE_DIR": str(state_dir), "ARS_EMBEDDER": "off", "PATH": "/usr/bin:/bin"}
    p = subprocess.run([sys.executable, "-m", "tui.cli.main", "rebuild", "--json"], capture_output=True, text=True,
                       cwd=ROOT, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == {"applied": 40, "episodes": 40, "skipped": [], "resumed_at": 0}
