"""A bad environment is one line on stderr, never a traceback: a malformed
ARS_NEO4J_URI, a read-only file system under the state directory, a full disk
(which also loses nothing already acknowledged). Real processes; the tmpfs
cases need root."""

from __future__ import annotations

import json
import os
import subprocess
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import SAMPLE
from loophelp import ars
from statehelp import SESSIONS, one_line_error, seeded  # noqa: F401 - seeded: the fixture


@pytest.mark.parametrize("uri", ["http://localhost:7474", "garbage", "bolt://", "bolt://host:notaport"])
def test_a_malformed_neo4j_uri_is_one_line(seeded: Path, uri: str):
    r = ars("recall", "outage", state=seeded, env={"ARS_NEO4J_URI": uri})
    assert r.returncode == 2
    line = one_line_error(r)
    assert "ARS_NEO4J_URI" in line and "bolt://HOST:7687" in line


@contextmanager
def mounted_tmpfs(where: Path, size: str):
    """A small tmpfs (root only): a full disk or a read-only file system."""
    where.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (CI runs as root)")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.decode().strip()[:80]}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def test_a_read_only_state_directory_is_one_line(seeded: Path, tmp_path: Path):
    with mounted_tmpfs(tmp_path / "ro", "4m") as mnt:
        state = mnt / "state"
        assert ars("ingest", str(SAMPLE), state=state).returncode == 0
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        r = ars("ingest", str(SESSIONS), state=state)
        assert r.returncode == 1
        line = one_line_error(r)
        assert "writable" in line or "read-only" in line
        r = ars("recall", "outage", "--json", state=state)  # reading still works
        assert r.returncode == 0 and json.loads(r.stdout)["hits"], r.stderr


def test_a_full_disk_is_one_line_and_loses_nothing_acknowledged(tmp_path: Path):
    big = tmp_path / "big.jsonl"
    with open(big, "w") as fh:
        for i in range(3000):
            fh.write(json.dumps({"id": f"manual:big-{i}", "text": f"note {i} " + "filler words " * 40}) + "\n")
    with mounted_tmpfs(tmp_path / "small", "512k") as mnt:
        state = mnt / "state"
        assert ars("ingest", str(SAMPLE), state=state).returncode == 0
        before = json.loads(ars("sync", "status", "--json", state=state).stdout)["counts"]["sqlite"]
        r = ars("ingest", str(big), state=state)
        assert r.returncode == 1
        assert "disk full" in one_line_error(r)
        after = ars("recall", "Neo4j outage", "--json", state=state)
        assert after.returncode == 0 and json.loads(after.stdout)["hits"], after.stderr
        # the promise of the line: free some space, run it again, and nothing is missing
        grown = subprocess.run(["mount", "-o", "remount,size=64m", str(mnt)], capture_output=True)
        assert grown.returncode == 0, grown.stderr
        status = json.loads(ars("sync", "status", "--json", state=state).stdout)
        assert status["counts"]["sqlite"] >= before
        assert ars("ingest", str(big), state=state).returncode == 0
        status = json.loads(ars("sync", "status", "--json", state=state).stdout)
        assert status["counts"]["sqlite"] == before + 3000, status["counts"]
