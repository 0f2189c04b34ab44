"""Processes run as the supervised agent runs: the same OS user as ARS, without root.

The trust model's agent shares the supervisor's user. Root may read any process's
memory whatever it asks (CAP_SYS_PTRACE), so when the suite runs as root these
helpers run both sides, ARS and "the agent", as one unprivileged user (nobody,
65534) through util-linux's ``setpriv``; otherwise as the current user.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

UID = 65534 if os.geteuid() == 0 else os.geteuid()
GID = 65534 if os.geteuid() == 0 else os.getegid()


def prefix() -> list[str]:
    """What to put before a command line so it runs as that user (nothing when we are it)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        reason = "setpriv (util-linux) is needed to run as an unprivileged user"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    argv = [setpriv, f"--reuid={UID}", f"--regid={GID}", "--clear-groups", "--inh-caps=-all"]
    _reach_checkout(argv)
    return argv


_reached: list[bool] = []


def _reach_checkout(argv: list[str]) -> None:
    """That user must run this checkout's Python and code. A checkout under a private
    directory (a CI runner's ``/check`` made with mode 700) stops it at the first parent
    it cannot search, and every process of the test would die before its first line: give
    each such parent search permission (o+x, no listing), once, and fail plainly if that is
    not enough."""
    if _reached:
        return
    root = Path(__file__).resolve().parents[1]
    probe = argv + [sys.executable, "-c", "import tui.entry"]
    env = {"PYTHONPATH": str(root), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    if subprocess.run(probe, cwd="/", env=env, capture_output=True, timeout=60).returncode != 0:
        for parent in [*reversed(root.parents), root]:
            mode = parent.stat().st_mode
            if not mode & stat.S_IXOTH:
                os.chmod(parent, mode | stat.S_IXOTH)
        r = subprocess.run(probe, cwd="/", env=env, capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            pytest.fail(f"user {UID} cannot run {sys.executable} on {root}: {r.stderr.strip()[-300:]}")
    _reached.append(True)


def home() -> Path:
    """A fresh directory that user owns (under /tmp: every parent lets it through)."""
    path = Path(tempfile.mkdtemp(prefix="ars-sameuser-", dir="/tmp"))
    give(path)
    return path


@pytest.fixture
def agent_home():
    """``home()`` for one test, removed after it."""
    path = home()
    yield path
    shutil.rmtree(path, ignore_errors=True)


def give(path: Path) -> None:
    """``path`` and everything under it owned by that user."""
    if os.geteuid() != 0:
        return
    os.chown(path, UID, GID)
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            os.chown(os.path.join(root, name), UID, GID, follow_symlinks=False)


def env(home_dir: Path, **extra: str) -> dict[str, str]:
    # no outer terminal's size either: pytest-xdist's workers carry COLUMNS/LINES (tests/tuihelp.py)
    keep = {k: v for k, v in os.environ.items()
            if not k.startswith(("ARS_", "CLAUDE_", "TMUX")) and k not in ("COLUMNS", "LINES")}
    keep.update(HOME=str(home_dir), ARS_RECALL_DAEMON="off",
                PYTHONPATH=str(Path(__file__).resolve().parents[1]), **extra)
    return keep
