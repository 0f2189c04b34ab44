"""Seed a state directory for ``ars demo``: real material through the real pipeline.

* Memory: the bundled session files (``samples/sessions/``: OpenClaw v3,
  Claude Code, Hermes export and generic JSONL, Chinese and English) and
  ``samples/episodes.jsonl`` are copied into ``<state>/demo-sessions/`` (so the
  raw-file tier reads them from the state directory) and go through
  ``ARS.ingest`` like any other file. With ``ARS_NEO4J_URI`` set the ingest
  syncs them to Neo4j as well; without it the Neo4j tier reports ``skipped``.
* Loops in every status, made by running the goal files of ``samples/goals/``
  through the offline policy with ``ARS.loop_start``: ``done`` (release notes,
  the Chinese product survey), two ``waiting_human`` (a risky shell restart
  to approve, a budget question to answer), ``blocked`` (three failed CI
  fixes), ``aborted`` (an iteration budget spent), ``initialized`` (the canary
  watch, created and not run) and ``active`` (a fork of the release-notes loop
  from an entry before its action ran: nothing is running it; resume it).

A seeded directory holds ``demo.json``; seeding refuses a directory that holds
anything else, so the demo never mixes into a real state directory. A
directory holding only an empty store (``memory.sqlite`` with no episodes, as
any read command such as ``ars loop list`` leaves behind, and empty lock or
ledger files) counts as empty: there is nothing in it to mix with.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any, Callable

from pydantic import BaseModel, Field

from core.api import ARS, MARKER, BadInput, Settings, load_settings, state_kind

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
SESSIONS_DIR = "demo-sessions"

# (goal file, run it?) in the order they are made: the newest loop is listed first
PLAN: list[tuple[str, bool]] = [
    ("release-notes.json", True),       # done
    ("产品调研.json", True),             # done (Chinese)
    ("neo4j-drift.json", True),         # aborted: the iteration budget is spent
    ("flaky-ci.json", True),            # blocked: three consecutive failures
    ("watch-canary.json", False),       # initialized: created, not run
    ("vendor-question.json", True),     # waiting_human: a question (the budget ceiling)
    ("deploy-hotfix.json", True),       # waiting_human: approve a risky shell restart
]
FORK_FROM = "release-notes-0.2"  # -> active: a fork from an entry before its iteration-2 action


class SeededLoop(BaseModel):
    loop_id: str
    goal_id: str
    status: str
    parent: str = ""


class DemoReport(BaseModel):
    state_dir: str
    reused: bool = False
    files: int = 0
    episodes_added: int = 0
    malformed: int = 0
    neo4j: str = "skipped"  # skipped | synced | <one-line error>
    loops: list[SeededLoop] = Field(default_factory=list)
    seconds: float = 0.0


def samples_present() -> bool:
    return (SAMPLES / "sessions").is_dir() and (SAMPLES / "goals").is_dir()


def seed(state_dir: Path | str | None = None, *, fresh: bool = False, settings: Settings | None = None,
         progress: Callable[[str], None] | None = None) -> DemoReport:
    """Seed ``state_dir`` (default: the configured one) unless it already holds
    the demo; ``fresh`` wipes an earlier demo first. Raises ``BadInput`` for a
    directory that holds other data, or when the samples are not there."""
    settings = settings or load_settings(state_dir=Path(state_dir) if state_dir is not None else None)
    state = Path(settings.state_dir)
    say = progress or (lambda _msg: None)
    kind = state_kind(state)
    if kind == "other":
        raise BadInput(f"{state} already holds other data; the demo seeds only an empty directory: "
                       "pass --state with a new directory (e.g. --state /tmp/ars-demo)")
    if kind == "demo" and not fresh:
        with ARS(settings) as ars:
            loops, _ = ars.loop_list()
        return DemoReport(state_dir=str(state.resolve()), reused=True,
                          loops=[SeededLoop(loop_id=s.loop_id, goal_id=s.goal_id, status=s.status,
                                            parent=s.parent.loop_id if s.parent else "") for s in loops])
    if not samples_present():
        raise BadInput(f"the demo's sample files are missing under {SAMPLES}: run ars demo from a source "
                       "checkout (pip install -e .)")
    if kind == "demo":
        _wipe(state)
    t0 = time.perf_counter()
    report = DemoReport(state_dir=str(state.resolve()))
    with ARS(settings) as ars:
        sessions = _copy_sessions(state)
        say(f"ingesting {sum(1 for p in sessions.rglob('*') if p.is_file())} session files")
        ing = ars.ingest([sessions])
        report.files, report.episodes_added, report.malformed = ing.files, ing.episodes_added, len(ing.malformed)
        if settings.neo4j_uri:
            sync = ing.sync or {}
            report.neo4j = ("synced" if sync.get("ok", False) and not sync.get("pending")
                            else f"not synced: {sync.get('error') or 'pending'}"[:160])
        made: dict[str, Any] = {}
        for name, run in PLAN:
            say(f"loop {name}")
            state_ = ars.loop_start(SAMPLES / "goals" / name, policy="offline", run=run)
            made[state_.goal_id] = state_
            report.loops.append(SeededLoop(loop_id=state_.loop_id, goal_id=state_.goal_id, status=state_.status))
        parent = made.get(FORK_FROM)
        if parent is not None:
            at = _fork_point(ars, parent.loop_id)
            if at is not None:
                forked = ars.loop_fork(parent.loop_id, at)
                report.loops.append(SeededLoop(loop_id=forked.loop_id, goal_id=forked.goal_id,
                                               status=forked.status, parent=f"{parent.loop_id}@{at}"))
    (state / MARKER).write_text(json.dumps({"seeded_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                                            "loops": [l.loop_id for l in report.loops]}, indent=1) + "\n",
                                encoding="utf-8")
    report.seconds = time.perf_counter() - t0
    return report


def _fork_point(ars: ARS, loop_id: str) -> int | None:
    """The entry just before iteration 2's action runs (the loop is active there)."""
    entries = ars.loop_history(loop_id)
    for e in entries:
        if e.to_status == "active" and e.to_step == "act" and e.iteration == 2:
            return e.index
    live = [e for e in entries if e.to_status == "active"]
    return live[-1].index if live else None


def _copy_sessions(state: Path) -> Path:
    dest = state / SESSIONS_DIR
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(SAMPLES / "sessions", dest)
    shutil.copy2(SAMPLES / "episodes.jsonl", dest / "episodes.jsonl")
    return dest


def _wipe(state: Path) -> None:
    """Remove an earlier demo's files (only called when ``demo.json`` marks it)."""
    for p in state.iterdir():
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink()
