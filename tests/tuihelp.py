"""Helpers for the dashboard tests: a seeded demo state (made once, copied per
test), deterministic loop ids for snapshots, the app on a state directory,
and waiting for the app's thread workers without sleeping blindly."""

from __future__ import annotations

import asyncio
import itertools
import shutil
import time
from pathlib import Path
from typing import Callable

import pytest

from core.api import ARS
from core.config import Settings

ROOT = Path(__file__).resolve().parents[1]
# roomy deadlines: a loaded 2-core machine must not turn a slow tier into a different picture
DEADLINES = {"neo4j_deadline": 3.0, "sqlite_deadline": 3.0, "files_deadline": 3.0}


def settings(state_dir: Path, **kw) -> Settings:
    return Settings(state_dir=state_dir, **{"neo4j_uri": None, **DEADLINES, **kw})


def seed_demo(state_dir: Path, *, deterministic: bool = False, monkeypatch=None):
    """Seed the demo into ``state_dir`` (no Neo4j). ``deterministic`` numbers
    the loop ids (``loop-000000000001``...) so snapshots do not change."""
    from tui.demo import seed

    if deterministic:
        import core.loop.engine as engine

        counter = itertools.count(1)
        assert monkeypatch is not None
        monkeypatch.setattr(engine, "new_loop_id", lambda: f"loop-{next(counter):012d}")
    return seed(settings=settings(state_dir))


def copy_state(template: Path, dest: Path) -> Path:
    shutil.copytree(template, dest)
    return dest


# A seeded demo for a test module (import both into it): seeded once, copied per test.
@pytest.fixture(scope="module")
def demo_template(tmp_path_factory) -> Path:
    state = tmp_path_factory.mktemp("demo") / "state"
    seed_demo(state)
    return state


@pytest.fixture
def demo(demo_template: Path, tmp_path: Path) -> Path:
    return copy_state(demo_template, tmp_path / "state")


def open_ars(state_dir: Path) -> ARS:
    return ARS(settings(state_dir))


def make_app(state_dir: Path, **kw):
    from tui.app import ArsApp

    return ArsApp(open_ars(state_dir), **kw)


async def wait_for(pilot, cond: Callable[[], object], timeout: float = 20.0, what: str = "condition"):
    """Let the app run until ``cond()`` is truthy (thread workers post back)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = cond()
        if value:
            return value
        await pilot.pause(0.05)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


async def loaded(pilot) -> None:
    await wait_for(pilot, lambda: pilot.app.store.loaded, what="the loop listing")
    await pilot.pause()


def disk(state_dir: Path, loop_id: str):
    """The loop as another process sees it on disk."""
    with open_ars(state_dir) as ars:
        return ars.loop_show(loop_id)


def loop_of(app, goal_id: str, status: str | None = None):
    for s in app.store.states.values():
        if s.goal_id == goal_id and (status is None or s.status == status):
            return s
    raise AssertionError(f"no loop for goal {goal_id} ({status or 'any status'})")


def select_row(table, key: str) -> None:
    table.move_cursor(row=table.get_row_index(key))


async def settle(pilot, seconds: float = 0.2) -> None:
    await asyncio.sleep(seconds)
    await pilot.pause()


async def open_history(pilot, app, loop_id: str):
    """Checkpoints (4) on one loop's history, its newest entry selected; returns the view."""
    await pilot.press("4")
    await pilot.pause()
    screen = app.screen
    screen.select_loop(loop_id)
    await wait_for(pilot, lambda: loop_id in screen.history and screen.selected_entry() is not None,
                   what="the history")
    await pilot.pause()
    return screen


async def search_recall(pilot, app, query: str, k: int | None = None):
    """Recall (3): type ``query`` (and ``k``) and wait for its result."""
    await pilot.press("3")
    await pilot.press("slash")
    await pilot.pause()
    assert app.screen.query_one("#query").has_focus
    if k is not None:
        app.screen.query_one("#k").value = str(k)
    await pilot.press(*query)
    await pilot.press("enter")
    await wait_for(pilot, lambda: app.screen.result is not None and app.screen.result.query == query,
                   what="the recall")
    await pilot.pause()


async def inbox_select(pilot, app, goal_id: str):
    """Open the Inbox and select the loop of ``goal_id`` (its request shown in the pane)."""
    await pilot.press("2")
    await pilot.pause()
    s = loop_of(app, goal_id)
    select_row(app.screen.query_one("#inbox-table"), s.loop_id)
    body = app.screen.query_one("#request-body")
    await wait_for(pilot, lambda: s.loop_id in str(body.render()), what="the request pane")
    return s


# -- tmux: the dashboard as a person's terminal runs it -------------------------------------------
@pytest.fixture
def tmux() -> str:
    """tmux's path; skipped without it, failing under CI=true (.ci/run installs it)."""
    import os

    path = shutil.which("tmux")
    if path is None:
        reason = "tmux is not installed (apt-get install tmux; .ci/run installs it)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return path


# A terminal's size is the terminal's: pytest-xdist's workers carry the controller's COLUMNS and
# LINES (80x24 when it has no terminal), and Textual and Rich would take them over the tmux pane's.
NOT_FOR_A_PANE = ("TMUX", "COLUMNS", "LINES")


def pane_env(base=None, **extra: str) -> dict[str, str]:
    """The environment of a program run in a tmux pane: ``base`` (os.environ) without
    the outer terminal's variables, plus ``extra``."""
    import os

    env = {k: v for k, v in (os.environ if base is None else base).items() if k not in NOT_FOR_A_PANE}
    env.update(extra)
    return env


def until(cond, what: str, limit: float = 60.0, show=None):
    """``cond()``'s first true value, polled every 0.1 s for at most ``limit`` seconds;
    ``show()`` (the screen, a log) is put in the failure."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        value = cond()
        if value:
            return value
        time.sleep(0.1)
    seen = f":\n{show()}" if show is not None else ""
    raise AssertionError(f"timed out after {limit:.0f} s waiting for {what}{seen}")
