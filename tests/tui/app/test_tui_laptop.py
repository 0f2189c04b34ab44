"""The dashboard on a laptop's default terminal, 80x24 (issue 32): whose decisions
count always in the header, detail panes scrolled with keys while the list keeps
them, sources that still say who asks, one short toast that covers no row, the
focus kept after the last decision, every key of every view in the help, text
readable on every theme (4.5:1) and the theme kept for the next run. Pilot on a
seeded demo state."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.theme import BUILTIN_THEMES
from textual.widgets._toast import Toast

from tuihelp import demo, demo_template  # noqa: F401 - the seeded-demo fixtures
from tuihelp import loaded, loop_of, make_app, open_ars, search_recall, select_row, wait_for

SIZE = (80, 24)


def _ask(state: Path, source: str, summary: str, **kw):
    with open_ars(state) as ars:
        return ars.inbox.create(source=source, kind="approval", summary=summary, detail=summary, binds="Bash",
                                meta={"tool_name": "Bash"}, **kw)


async def test_the_loops_detail_scrolls_with_keys_to_the_blockers(demo: Path):
    app = make_app(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        table = app.screen.query_one("#loops-table")
        select_row(table, loop_of(app, "nightly-ci-green").loop_id)
        pane = app.screen.query_one("#loop-detail")
        await wait_for(pilot, lambda: "blockers" in str(app.screen.query_one("#loop-detail-body").render()).lower(),
                       what="the blocked loop's detail")
        await pilot.pause(0.2)
        assert pane.max_scroll_y > 0, "at 80x24 the detail is taller than its pane"
        row = table.cursor_row
        for _ in range(40):
            await pilot.press("J")
        await pilot.pause()
        assert pane.scroll_y == pane.max_scroll_y and table.cursor_row == row and table.has_focus
        await pilot.press("K")
        await pilot.pause()
        assert pane.scroll_y == pane.max_scroll_y - 3
        await pilot.press("shift+pageup")
        await pilot.pause()
        assert pane.scroll_y < pane.max_scroll_y - 3 and table.cursor_row == row


async def test_home_and_end_go_to_the_first_and_last_row_of_a_list(demo: Path):
    for i in range(12):  # more requests than 80x24 shows
        _ask(demo, f"claude-code:s-{i}", f"Bash: make deploy-{i}")
    app = make_app(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        for view, table_id in (("2", "#inbox-table"), ("1", "#loops-table")):
            await pilot.press(view)
            table = app.screen.query_one(table_id)
            await wait_for(pilot, lambda: table.row_count > 1 and table.has_focus, what=f"the list {table_id}")
            await pilot.press("end")
            await wait_for(pilot, lambda: table.cursor_row == table.row_count - 1, what=f"End in {table_id}")
            if table_id == "#inbox-table":
                assert table.scroll_y == table.max_scroll_y > 0  # scrolled to it: the top rows are out of sight
            await pilot.press("home")
            await wait_for(pilot, lambda: table.cursor_row == 0 and table.scroll_y == 0, what=f"Home in {table_id}")


async def test_the_recall_score_scrolls_with_keys_and_names_each_tier_whole(demo: Path):
    from rich.console import Console

    from tui.screens.recall_score import score_tables

    app = make_app(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await search_recall(pilot, app, "neo4j outage recall")
        await pilot.press("escape")  # back to the results
        await pilot.pause(0.3)
        pane = app.screen.query_one("#hit-pane")
        assert pane.max_scroll_y > 0
        for _ in range(60):
            await pilot.press("shift+down")
        await pilot.pause()
        assert pane.scroll_y == pane.max_scroll_y and app.screen.focused is app.screen.query_one("#hits")
        hit = app.screen.result.hits[0]
        console = Console(width=36, record=True, file=open("/dev/null", "w"))
        console.print(score_tables(hit, list(hit.per_tier)))
        text = console.export_text()
        assert "fuse_" not in text and all(f"{t} " in text for t in hit.per_tier), text


async def test_sources_say_who_asks_in_eleven_columns(demo: Path):
    r = _ask(demo, "claude-code:9a1b2c3d-5e6f-4a1b-8c9d-0e1f2a3b4c5d", "Bash: make deploy", expires_in=120)
    app = make_app(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("2")
        await wait_for(pilot, lambda: r.id in app.screen.cells, what="the request")
        table = app.screen.query_one("#inbox-table")
        cells = {k: str(table.get_cell(k, "source")) for k in app.screen.cells}
        assert cells[r.id] == "claude:9a1b"
        ci = loop_of(app, "nightly-ci-green").loop_id
        assert cells[ci] == "nightly-ci…"


async def test_one_short_toast_covers_no_row_and_the_focus_stays_after_the_last_decision(demo: Path):
    with open_ars(demo) as ars:  # leave one request: the agent's
        for r in ars.inbox_list("pending"):
            ars.loop_cancel(r.meta["loop_id"], "not now")
    only = _ask(demo, "claude-code:s-2", "Bash: make clean")
    app = make_app(demo, watch=True)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot)
        await pilot.press("2")
        await wait_for(pilot, lambda: only.id in app.screen.cells, what="the one request")
        for i in range(4):
            app.notify(f"notice number {i} " * 8, title="Test")
        await wait_for(pilot, lambda: list(app.screen.query(Toast)), what="a toast")
        await pilot.pause(0.3)
        toasts = list(app.screen.query(Toast))
        assert len(toasts) == 1 and "notice number 3" in str(toasts[0].render())  # the newest; the log has all
        table = app.screen.query_one("#inbox-table")
        assert toasts[0].region.height == 1 and not toasts[0].region.overlaps(table.region)
        first_line = toasts[0].region.y
        for i in range(3):  # notices that come one after another stay on that line (no empty holder above)
            app.notify(f"later notice {i}", title="Test")
            await wait_for(pilot, lambda: any(f"later notice {i}" in str(t.render())
                                              for t in app.screen.query(Toast)), what=f"later notice {i}")
            await pilot.pause(0.2)
            (toast,) = list(app.screen.query(Toast))
            assert toast.region.y == first_line and not toast.region.overlaps(table.region), toast.region
        app.screen.select(only.id)
        await pilot.press("a")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "ConfirmModal", what="the confirm dialog")
        await pilot.press("y")
        with open_ars(demo) as ars:
            await wait_for(pilot, lambda: ars.inbox.get(only.id).status == "approved", what="the decision")
        await wait_for(pilot, lambda: not app.screen.cells, what="an empty inbox")
        again = _ask(demo, "claude-code:s-2", "Bash: make docs")
        await wait_for(pilot, lambda: again.id in app.screen.cells, what="the next request")
        await pilot.pause(0.2)
        assert app.screen.focused is table  # no tab needed: the keys act on the list at once
        await pilot.press("n")
        await pilot.pause()
        assert app.screen.selected == again.id


def test_help_lists_every_key_of_every_view():
    from tui.app import ArsApp
    from tui.modals import HELP
    from tui.screens.base import DashboardView
    from tui.screens.checkpoints import CheckpointsScreen
    from tui.screens.context import ContextScreen
    from tui.screens.health import HealthScreen
    from tui.screens.inbox import InboxScreen
    from tui.screens.loops import LoopsScreen
    from tui.screens.recall import RecallScreen

    shown = {"question_mark": "?", "slash": "/", "left_square_bracket": "[", "right_square_bracket": "]",
             "plus": "+", "equals_sign": "=", "minus": "-", "escape": "esc", "shift+down": "shift+↓",
             "shift+up": "shift+↑", "shift+pagedown": "shift+PgDn", "shift+pageup": "shift+PgUp"}
    keys_of = {section: {k for key, _ in rows for k in key.split()} for section, rows in HELP.items()}
    anywhere = keys_of["Anywhere"]
    views = {"Loops (1)": LoopsScreen, "Inbox (2)": InboxScreen, "Recall (3)": RecallScreen,
             "Checkpoints (4)": CheckpointsScreen, "Health (5)": HealthScreen, "Context (6)": ContextScreen}
    missing = []
    for section, cls in [("Anywhere", ArsApp), ("Anywhere", DashboardView), *views.items()]:
        for b in cls.BINDINGS:
            for key in b.key.split(","):
                key = shown.get(key, key)
                if key not in keys_of[section] and key not in anywhere:
                    missing.append(f"{section}: {key} ({b.action})")
    assert missing == []


@pytest.mark.parametrize("name", [n for n in BUILTIN_THEMES if not n.startswith("ansi")])
def test_every_theme_reads_at_4_5_to_1(tmp_path, name):
    from textual.color import Color

    from tui.widgets.contrast import BACKGROUNDS, MIN_CONTRAST, TEXT_VARS, contrast, resolve

    app = make_app(tmp_path / "state", watch=False)
    app.theme = name
    v = app.get_css_variables()
    base = Color(0, 0, 0) if BUILTIN_THEMES[name].dark else Color(255, 255, 255)
    low = []
    for var in TEXT_VARS:
        for bg in BACKGROUNDS:
            b = resolve(v[bg], base)
            c = resolve(v[var], b)
            if contrast(c, b) < MIN_CONTRAST:
                low.append(f"{var} on {bg}: {contrast(c, b):.2f}")
    assert low == [] and app.theme_variables is v


async def test_the_theme_chosen_is_kept_for_the_next_run(demo: Path):
    app = make_app(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        app.theme = "solarized-light"
        await pilot.pause()
    again = make_app(demo, watch=False)
    async with again.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        assert again.theme == "solarized-light"
