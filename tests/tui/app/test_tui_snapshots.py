"""Snapshots of the five views (and Recall's explain pane) on the demo state (pytest-textual-snapshot).

The demo is seeded with numbered loop ids, and the dashboard prints ages,
clock times, latencies and the state path as fixed placeholders
(``tui.widgets.status.STILL``), so a picture changes only when the dashboard
does. Text cursors do not blink. Textual is pinned in pyproject.toml: a new
Textual may draw differently. After an intended change:
``pytest tests/tui/app/test_tui_snapshots.py --snapshot-update`` and look at the SVGs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tuihelp import copy_state, loaded, make_app, seed_demo, settle, wait_for

pytest.importorskip("pytest_textual_snapshot")

RECALL_QUERY = "Alice Bob weekly plan 崩溃测试"  # matches sample sessions only: no score drifts with the date


@pytest.fixture(scope="module", autouse=True)
def fixed_host():
    """The Health view names this host: a fixed id, not the name of the machine the tests run on."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ARS_HOST_ID", "snapshot-host")
        yield


@pytest.fixture(scope="module")
def demo_template(tmp_path_factory) -> Path:
    state = tmp_path_factory.mktemp("snapdemo") / "state"
    with pytest.MonkeyPatch.context() as mp:
        seed_demo(state, deterministic=True, monkeypatch=mp)
    return state


@pytest.fixture
def still(monkeypatch):
    from tui.widgets import status

    monkeypatch.setattr(status, "STILL", True)


@pytest.fixture
def demo(demo_template: Path, tmp_path: Path, still) -> Path:
    return copy_state(demo_template, tmp_path / "state")


def app_on(demo: Path):
    return make_app(demo, watch=False, blink=False)


async def _loops(pilot):
    await loaded(pilot)


async def _inbox(pilot):
    await loaded(pilot)
    await pilot.press("2")
    await pilot.pause()
    body = pilot.app.screen.query_one("#request-body")
    # the pane once its context (the loop's last steps, related memories: a thread worker) is in
    await wait_for(pilot, lambda: "reading the agent" not in str(body.render()), what="the request's context")
    await settle(pilot)


async def _recall(pilot):
    await loaded(pilot)
    app = pilot.app
    await pilot.press("3", "slash")
    await pilot.press(*RECALL_QUERY)
    await pilot.press("enter")
    await wait_for(pilot, lambda: app.screen.result is not None, what="the recall")
    await wait_for(pilot, lambda: app.screen.query_one("#breakdown").display, what="the score components")
    await settle(pilot)  # past the detail pane's redraw delay: the picture a person sees once the cursor rests


async def _checkpoints(pilot):
    await loaded(pilot)
    app = pilot.app
    await pilot.press("4")
    await pilot.pause()
    hotfix = next(s for s in app.store.states.values() if s.goal_id == "hotfix-1.4.2-staging")
    app.screen.select_loop(hotfix.loop_id)
    await wait_for(pilot, lambda: app.screen.selected_entry() is not None, what="the history")
    await pilot.press("left_square_bracket", "right_square_bracket")  # step back and forth: the newest entry
    await settle(pilot, 0.3)  # the tree measures its lines on idle: the picture once it has


async def _health(pilot):
    await loaded(pilot)
    app = pilot.app
    await pilot.press("5")
    await wait_for(pilot, lambda: app.screen.report is not None, what="the health report")
    await settle(pilot)


async def _explain(pilot):
    await _recall(pilot)
    app = pilot.app
    await pilot.press("x")
    await wait_for(pilot, lambda: type(app.screen).__name__ == "EpisodePicker", what="the picker")
    await pilot.press("enter")  # the selected hit
    await wait_for(pilot, lambda: app.screen.explanation is not None, what="the explanation")
    await settle(pilot)


VIEWS = {"loops": _loops, "inbox": _inbox, "recall": _recall, "checkpoints": _checkpoints, "health": _health,
         "explain": _explain}


@pytest.mark.parametrize("view", list(VIEWS))
def test_view_160x48(view: str, demo: Path, snap_compare):
    assert snap_compare(app_on(demo), terminal_size=(160, 48), run_before=VIEWS[view])


@pytest.mark.parametrize("view", list(VIEWS))
def test_view_80x24(view: str, demo: Path, snap_compare):
    assert snap_compare(app_on(demo), terminal_size=(80, 24), run_before=VIEWS[view])


def _agent_requests(state: Path, monkeypatch) -> None:
    """A Claude Code call held on its hook's deadline and a decided one, with fixed ids."""
    import itertools
    import uuid

    from tuihelp import open_ars

    counter = itertools.count(1)
    with monkeypatch.context() as mp:
        mp.setattr(uuid, "uuid4", lambda: uuid.UUID(int=next(counter) << 96))  # req-000000010000, ...
        with open_ars(state) as ars:
            ars.inbox.create(source="claude-code:s-1", kind="approval", summary="Bash: terraform apply",
                             detail="terraform apply -auto-approve", risk="high", binds="Bash", expires_in=50,
                             meta={"cwd": "/srv/infra"})
            done = ars.inbox.create(source="claude-code:s-1", kind="approval", summary="Bash: make release",
                                    detail="make release", risk="medium", binds="Bash")
            ars.inbox.decide(done.id, "reject", "not on a Friday", by="ops@desk")


async def _inbox_urgent(pilot):
    await _inbox(pilot)


async def _inbox_decided(pilot):
    await loaded(pilot)
    await pilot.press("2", "d")
    await wait_for(pilot, lambda: pilot.app.screen.cells, what="the decided requests")
    await settle(pilot)


@pytest.mark.parametrize("view", ["urgent", "decided"])
def test_inbox_160x48(view: str, demo: Path, snap_compare, monkeypatch):
    """The Inbox with a held call first (its countdown) and the decided filter (the audit)."""
    _agent_requests(demo, monkeypatch)
    assert snap_compare(app_on(demo), terminal_size=(160, 48),
                        run_before=_inbox_urgent if view == "urgent" else _inbox_decided)
