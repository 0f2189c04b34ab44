"""The terminal passphrase prompt of `ars inbox approve`, in a real terminal (tmux): it
names the key, the decision, exactly what runs and its hash prefix (as `ars inbox show`
prints it), never echoes the passphrase, and throws away keys typed before it showed
(`tmux send-keys` into the pane ahead of the prompt is not a passphrase). Skipped
without tmux, except under CI=true, where a missing tmux fails."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tuihelp import pane_env, tmux, until  # noqa: F401 - tmux: the fixture

from core.api import ARS
from core.config import Settings
from core.inbox import signing

ROOT = Path(__file__).resolve().parents[3]
PASS = "correct horse battery staple"




def test_the_real_prompt_names_key_request_and_hash_hides_input_and_drops_typed_ahead_keys(tmux, tmp_path):
    state = tmp_path / "state"
    with ARS(Settings(state_dir=state)) as a:
        fp = a.supervisor_init(PASS.encode())
        r = a.request_approval("claude-code:s1", "Bash: rm", "rm -rf build", binds="Bash")
    sock, session = str(tmp_path / "tmux.sock"), "prompt"
    shown = subprocess.run([sys.executable, "-m", "tui.entry", "inbox", "show", r.id, "--state", str(state)],
                           capture_output=True, text=True, cwd=ROOT, timeout=60,
                           env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout

    def t(*args: str) -> str:
        return subprocess.run([tmux, "-S", sock, *args], capture_output=True, text=True, check=True).stdout

    def screen() -> str:
        return t("capture-pane", "-p", "-t", session)

    # the shell waits for `go` before it runs ars: keys sent meanwhile wait in the terminal, typed ahead
    go = tmp_path / "go"
    command = (f"while [ ! -e {go} ]; do sleep 0.05; done; PYTHONPATH={ROOT} {sys.executable} -m tui.entry inbox "
               f"approve {r.id} --state {state}; echo EXIT=$?; sleep 60")
    env = pane_env()
    subprocess.run([tmux, "-S", sock, "new-session", "-d", "-s", session, "-x", "150", "-y", "30", "sh", "-c", command],
                   check=True, env=env, cwd=ROOT)
    try:
        t("send-keys", "-t", session, "a guess typed ahead", "Enter")
        until(lambda: "a guess typed ahead" in screen(), "the keys to reach the terminal (echoed by it)")
        go.touch()
        text = until(lambda: "supervisor passphrase to approve" in screen() and screen(), "the prompt")
        assert f"ARS supervisor key {fp}" in text
        assert f"sign: approve {r.id}" in text and "runs: rm -rf build" in text
        prefix = r.exact_hash().split(":", 1)[1][:12]
        grouped = " ".join(prefix[i:i + 4] for i in range(0, 12, 4))
        assert f"exact hash: {grouped}" in text and f"exact hash: {grouped}" in shown  # the same as ars inbox show
        t("send-keys", "-t", session, PASS, "Enter")
        done = until(lambda: "EXIT=" in screen() and screen(), "ars to end")
        # the line typed ahead was thrown away (taken as the passphrase it would have failed: EXIT=1)
        assert "EXIT=0" in done and f"{r.id}: approved" in done
        assert PASS not in done  # never echoed
    finally:
        subprocess.run([tmux, "-S", sock, "kill-server"], capture_output=True)
    with ARS(Settings(state_dir=state)) as a:
        d = a.inbox_get(r.id).decision
    payload, why = signing.verify_decision(d.model_dump(mode="json"), pin=fp, request_id=r.id,
                                           input_hash=r.exact_hash())
    assert payload is not None, why
