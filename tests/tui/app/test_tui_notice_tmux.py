"""The notice in a real terminal (issue 24): `ars tui` in tmux sets the window
title's count (OSC 2: tmux's pane title) and rings the bell (tmux flags the
window) when another process makes a request, while the person looks at
another window. Skipped without tmux, except under CI=true, where a missing
tmux fails (.ci/run installs it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tuihelp import ROOT, open_ars, pane_env, seed_demo, tmux, until  # noqa: F401 - tmux: the fixture




def test_a_new_request_sets_the_title_count_and_rings_the_bell_in_tmux(tmux: str, tmp_path: Path):
    state = tmp_path / "state"
    seed_demo(state)
    session = f"ars-notice-{os.getpid()}"
    sock = str(tmp_path / "tmux.sock")  # a server of its own: no other session's windows or options

    def t(*args: str) -> str:
        return subprocess.run([tmux, "-S", sock, *args], capture_output=True, text=True, check=True).stdout

    env = pane_env()
    subprocess.run([tmux, "-S", sock, "new-session", "-d", "-s", session, "-x", "160", "-y", "48",
                    f"{ROOT / '.venv/bin/ars'} tui --state {state}"], check=True, env=env, cwd=ROOT)
    try:
        title = lambda: t("display-message", "-p", "-t", f"{session}:0", "#{pane_title}").strip()  # noqa: E731
        until(lambda: title() == "ARS — 3 waiting", "the title's count", 60)
        t("set-option", "-g", "monitor-bell", "on")
        t("new-window", "-t", session)  # the person looks elsewhere: the dashboard's window is not current
        bell = lambda: t("display-message", "-p", "-t", f"{session}:0", "#{window_bell_flag}").strip()  # noqa: E731
        assert bell() == "0"
        with open_ars(state) as ars:
            ars.inbox.create(source="claude-code:s1", kind="approval", summary="Bash: make deploy",
                             detail="make deploy", risk="high", binds="Bash", expires_in=50)
        until(lambda: bell() == "1", "the bell flag on the dashboard's window", 30)
        until(lambda: title() == "ARS — 4 waiting", "the title's new count", 30)
    finally:
        subprocess.run([tmux, "-S", sock, "kill-server"], capture_output=True)
