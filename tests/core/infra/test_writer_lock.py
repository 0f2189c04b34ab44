"""Two writers at once (core/infra/writer_lock.py): concurrent ingests serialise
and lose nothing, and a waiting writer says whom it waits for. Real processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import SAMPLE, env_without_ars
from core.infra.writer_lock import writer_lock
from loophelp import ROOT, ars
from statehelp import SESSIONS


def test_concurrent_ingests_serialise(tmp_path: Path):
    state = tmp_path / "state"
    alone = tmp_path / "alone"
    assert ars("ingest", str(SESSIONS), state=alone).returncode == 0
    expected = json.loads(ars("sync", "status", "--json", state=alone).stdout)["counts"]["sqlite"]

    cmd = [sys.executable, "-m", "tui.cli.main", "ingest", str(SESSIONS), "--json", "--state", str(state)]
    env = env_without_ars()
    procs = [subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(3)]
    results = [p.communicate(timeout=120) for p in procs]
    for p, (out, errs) in zip(procs, results):
        assert p.returncode == 0, errs
        assert "IntegrityError" not in errs
    assert sum(json.loads(out)["episodes_added"] for out, _ in results) == expected
    status = json.loads(ars("sync", "status", "--json", state=state).stdout)
    assert status["counts"]["sqlite"] == expected
    registered = {json.loads(ln)["path"] for ln in (state / "sources.jsonl").read_text().splitlines()}
    on_disk = {str(p.resolve()) for p in SESSIONS.rglob("*") if p.suffix in (".jsonl", ".md")}
    assert on_disk <= registered


def test_a_waiting_writer_says_who_it_waits_for(tmp_path: Path):
    state = tmp_path / "state"
    state.mkdir()
    with writer_lock(state, "the test"):
        cmd = [sys.executable, "-m", "tui.cli.main", "ingest", str(SAMPLE), "--state", str(state)]
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first = proc.stderr.readline()  # blocks until it has something to say: it waits for us
        assert proc.poll() is None
        assert "waiting for pid" in first and "the test" in first, first
    out, errs = proc.communicate(timeout=120)
    assert proc.returncode == 0, errs
    assert "got the writer lock" in errs
