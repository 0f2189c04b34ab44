"""Private state: the state directory is 0700 and its files 0600 whatever the
umask (the CLI's and the library's writes alike), and an old world-readable
state is made private when opened."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from conftest import make_memory
from loophelp import ars
from statehelp import SESSIONS, seeded  # noqa: F401 - seeded: the fixture


def test_state_is_private_whatever_the_umask(tmp_path: Path):
    state = tmp_path / "state"
    goal = tmp_path / "goal.json"
    goal.write_text(json.dumps({"goal": "Clean the tmp dir", "script": [
        {"action": "clean", "tool": "shell", "args": {"cmd": "true"}, "needs_approval": True, "outcome": "pass"}]}))
    old = os.umask(0o022)
    try:
        assert ars("ingest", str(SESSIONS), state=state).returncode == 0
        run = ars("loop", "run", "--goal-file", str(goal), "--json", state=state)
        loop_id = json.loads(run.stdout)["loop_id"]
        assert ars("loop", "approve", loop_id, state=state).returncode == 0
        # the library, not only the CLI (which also sets a umask)
        mem = make_memory(state)
        mem.store([])
        mem.close()
    finally:
        os.umask(old)
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    loose = [str(p.relative_to(state)) for p in state.rglob("*")
             if stat.S_IMODE(p.stat().st_mode) & 0o077]
    assert loose == []
    assert (state / "ledger.jsonl").exists() and list((state / "approvals").rglob("*.json"))


def test_an_old_world_readable_state_is_made_private(seeded: Path):
    os.chmod(seeded, 0o755)
    os.chmod(seeded / "ledger.jsonl", 0o644)
    assert ars("recall", "outage", state=seeded).returncode == 0
    assert stat.S_IMODE(seeded.stat().st_mode) == 0o700
    assert stat.S_IMODE((seeded / "ledger.jsonl").stat().st_mode) == 0o600
