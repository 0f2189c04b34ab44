"""The dashboard in a real terminal: scripts/tmux_smoke.sh runs `ars demo` in
tmux at 160x48 and 80x24, sends keys (1-4, a, y, /, x, [, ], f, ?, q) and
reads the screen back. Skipped without tmux, except under CI=true, where a
missing tmux fails (.ci/run installs it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def tmux() -> str:
    path = shutil.which("tmux")
    if path is None:
        reason = "tmux is not installed (apt-get install tmux; .ci/run installs it)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return path


@pytest.mark.parametrize("size", ["160x48", "80x24"])
def test_dashboard_in_tmux(tmux: str, size: str, tmp_path: Path):
    env = {**os.environ, "ARS_BIN": f"{sys.executable} -m tui.cli.main"}
    env.pop("ARS_NEO4J_URI", None)  # the demo without Neo4j: fast and the same on every machine
    env.pop("ARS_STATE_DIR", None)
    r = subprocess.run(["bash", str(ROOT / "scripts" / "tmux_smoke.sh"), "--size", size, "--out", str(tmp_path)],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, f"{r.stdout}\n{r.stderr}"
    assert f"tmux smoke passed ({size})" in r.stdout
    loops = (tmp_path / f"loops-{size}.txt").read_text()
    assert "? waiting" in loops and "blocked" in loops  # the status column: waiting_human drawn short
