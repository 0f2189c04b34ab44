"""Processes run as the supervised agent runs: the same OS user as ARS, without root.

The trust model's agent shares the supervisor's user. Root may read any process's
memory whatever it asks (CAP_SYS_PTRACE), so when the suite runs as root these
helpers run both sides, ARS and "the agent", as one unprivileged user (nobody,
65534) through util-linux's ``setpriv``; otherwise as the current user.
"""

from __future__ import annotations

import os
import shutil
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
    return [setpriv, f"--reuid={UID}", f"--regid={GID}", "--clear-groups", "--inh-caps=-all"]


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
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("ARS_", "CLAUDE_", "TMUX"))}
    keep.update(HOME=str(home_dir), ARS_RECALL_DAEMON="off",
                PYTHONPATH=str(Path(__file__).resolve().parents[1]), **extra)
    return keep
