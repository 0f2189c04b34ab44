"""A state directory seeded as a person seeds one (`ars ingest` of the sample
sessions and episodes, in a real process), and the checks the trust tests share:
a one-line error on stderr, each tier's status from `ars recall --json`, a local
port nothing listens on."""

from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path

import pytest

from conftest import SAMPLE
from loophelp import ROOT, ars


SESSIONS = ROOT / "samples" / "sessions"


def closed_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def one_line_error(r: subprocess.CompletedProcess) -> str:
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert "Traceback" not in r.stderr, r.stderr
    assert len(lines) == 1, r.stderr
    return lines[0]


@pytest.fixture
def seeded(tmp_path: Path) -> Path:
    state = tmp_path / "state"
    r = ars("ingest", str(SESSIONS), str(SAMPLE), state=state)
    assert r.returncode == 0, r.stderr
    return state


def tiers_of(stdout: str) -> dict[str, str]:
    return {t["tier"]: t["status"] for t in json.loads(stdout)["tiers"]}
