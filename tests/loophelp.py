"""Helpers for the loop tests: engines on a real state directory, goal
frames, ledger reads, and the `ars` command as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from core.config import Settings
from core.ledger.ledger import Ledger
from core.loop.engine import Engine
from core.loop.models import GoalFrame
from core.memory.memory import Memory
from conftest import env_without_ars

ROOT = Path(__file__).resolve().parents[1]
GOALS = ROOT / "samples" / "goals"


def engine(state_dir: Path, memory: Memory | None = None, **kw: Any) -> Engine:
    memory = memory or Memory(Settings(state_dir=state_dir))
    return Engine(state_dir, memory, Settings(state_dir=state_dir), **kw)


def goal(script: list[dict] | None, text: str = "Fix the nightly backup to the NAS", **kw: Any) -> GoalFrame:
    data: dict[str, Any] = {"goal": text, **kw}
    if script is not None:
        data["script"] = script
    return GoalFrame.model_validate(data)


def sample(name: str) -> GoalFrame:
    return GoalFrame.model_validate_json((GOALS / name).read_text(encoding="utf-8"))


def events(state_dir: Path, *types: str) -> list:
    return list(Ledger(state_dir).read(types=types or None))


def loop_events(state_dir: Path, loop_id: str, *types: str) -> list:
    return [e for e in events(state_dir, *types) if e.data.get("loop_id") == loop_id]


def ars(*args: str, state: Path | None = None, env: dict | None = None, stdin: str | None = None,
        timeout: float = 120) -> subprocess.CompletedProcess:
    e = env_without_ars()
    e.update(env or {})
    cmd = [sys.executable, "-m", "tui.cli.main", *args] + (["--state", str(state)] if state is not None else [])
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=e, input=stdin, timeout=timeout)


def ars_json(*args: str, state: Path, expect: int | tuple[int, ...] = 0, **kw: Any) -> Any:
    r = ars(*args, "--json", state=state, **kw)
    codes = expect if isinstance(expect, tuple) else (expect,)
    assert r.returncode in codes, (r.returncode, r.stdout, r.stderr)
    return json.loads(r.stdout)
