"""Every command ARS shows a person to run is shell-quoted: the agent chose its words
(a forget request's episode id, query and reason; a loop's id), and the supervisor pastes it."""

from __future__ import annotations

import subprocess
from pathlib import Path

from core.api import ARS
from core.config import Settings
from tui.agents.mcp_server import request_forget_record

HOSTILE = ["$(touch {p}/a)", "`touch {p}/b`", "x\"; touch {p}/c; echo \"", "x'; touch {p}/d; echo '"]


def _run_as_pasted(command: str, tmp_path: Path) -> str:
    """The command pasted into bash, `ars` standing in as a function that prints its arguments."""
    r = subprocess.run(["bash", "-c", f"ars() {{ printf '%s\\n' \"$@\"; }}\n{command}"], capture_output=True,
                       text=True, timeout=30, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_a_forget_request_shows_a_command_that_runs_nothing_else(tmp_path):
    with ARS(Settings(state_dir=tmp_path / "state"), create=True) as ars:
        for i, raw in enumerate(HOSTILE):
            word = raw.format(p=tmp_path)
            for query in (False, True):
                req = request_forget_record(ars, word, word, query=query)
                printed = _run_as_pasted(req.detail, tmp_path).splitlines()
                assert word in printed, (req.detail, printed)  # reached ars as one word, unchanged
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state"]  # nothing ran


def test_a_loop_hint_quotes_the_loop_id(tmp_path):
    from core.loop.models import LoopState
    from core.loop.rehydrate import next_step

    fields = LoopState.model_fields
    assert "loop_id" in fields
    s = LoopState.model_construct(loop_id=f"$(touch {tmp_path}/x)", status="blocked", exit_reason="stuck",
                                  pending_approval=None, current_step="observe", iteration=1)
    _, command = next_step(s)
    out = _run_as_pasted(command.split("  |  ")[0].replace('"..."', "ok"), tmp_path)
    assert f"$(touch {tmp_path}/x)" in out.splitlines() and not (tmp_path / "x").exists()
