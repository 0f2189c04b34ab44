"""What keeps the dashboard's keys quick on a large state, checked for behaviour
(never timed; bench/dashboard.py measures the time): a view switch holds the
screen only until the new view has redrawn, rows enter a table in one pass and
the same as one by one, ``w`` round-trips its rows, a step in Checkpoints is
not drawn twice, stale render caches are dropped, a paint looks each style up
once, and garbage collection waits for a pause in the typing."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from tuihelp import demo, demo_template  # noqa: F401 - the seeded-demo fixtures
from tuihelp import loaded, loop_of, make_app, open_history, wait_for

SIZE = (160, 48)


# -- a view switch ------------------------------------------------------------------------
async def test_a_view_switch_holds_the_screen_until_the_new_view_has_redrawn(demo: Path):
    app = make_app(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        for key, mode, table in (("2", "inbox", "#inbox-table"), ("1", "loops", "#loops-table"),
                                 ("2", "inbox", "#inbox-table")):
            await pilot.press(key)
            await pilot.pause()
            held = app.__dict__["_switch_hold"]
            assert held["ended_by"] == "view"  # not Textual's fixed 50 ms timer
            assert app._batch_count == 0  # updates flow again
            assert app.current_mode == mode and app.screen.query_one(table).row_count
        # the inbox shows what the store holds (its resume redrew it under the hold)
        assert app.screen.query_one("#inbox-table").row_count == app.inbox_count
        # a switch to the view already shown holds nothing
        app.__dict__["_switch_hold"] = None
        app.switch_mode("inbox")
        assert app.__dict__["_switch_hold"] is None and app._batch_count == 0
        # a hold the view never ended (a view busy mounting) still ends on Textual's timer
        app._switching = True
        app.delay_update(0.01)
        app._switching = False
        held = app.__dict__["_switch_hold"]
        assert app._batch_count == 1
        await wait_for(pilot, lambda: not held["on"], what="the timer to end the hold")
        assert held["ended_by"] == "timer" and app._batch_count == 0


async def test_n_from_loops_opens_the_inbox_on_the_oldest_item_with_one_hold(demo: Path):
    app = make_app(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("n")
        await pilot.pause()
        assert app.current_mode == "inbox"
        assert app.__dict__["_switch_hold"]["ended_by"] == "view"
        table = app.screen.query_one("#inbox-table")
        assert table.cursor_row == 0 and app.screen.selected == table.cursor_key()


# -- rows in one pass --------------------------------------------------------------------------
async def test_rows_added_in_one_pass_are_the_rows_add_row_makes(demo: Path):
    from textual.widgets.data_table import DuplicateKey

    from tui.widgets.table import KeyedTable

    app = make_app(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        one, bulk = KeyedTable(flex="b"), KeyedTable(flex="b")
        await app.screen.mount(one)
        await app.screen.mount(bulk)
        for t in (one, bulk):
            t.add_column("a", key="a", width=4)
            t.add_column("b", key="b", width=10)
            t.add_column("c", key="c", width=4)
        rows = [(f"k{i}", (f"a{i}", f"b{i}", f"c{i}")) for i in range(5)] + [("short", ("x",))]
        highlighted: list[int] = []
        real = bulk._highlight_cursor
        bulk._highlight_cursor = lambda: highlighted.append(1) or real()  # announces RowHighlighted
        for key, cells in rows:
            one.add_row(*cells, key=key)
        bulk.add_keyed_rows(rows)
        assert bulk.row_count == one.row_count == 6
        for i in range(6):
            assert bulk.get_row_at(i) == one.get_row_at(i)
        assert bulk.get_row("short") == ["x", None, None]  # missing cells are empty, as add_row leaves them
        assert bulk.cursor_key() == one.cursor_key() == "k0"
        assert highlighted == [1]  # the first rows of an empty table highlight one, as add_row does
        bulk.add_keyed_rows([])  # nothing to add changes nothing
        assert bulk.row_count == 6
        with pytest.raises(DuplicateKey):
            bulk.add_keyed_rows([("k1", ("again",))])
        with pytest.raises(ValueError):
            bulk.add_keyed_rows([("k9", ("1", "2", "3", "4"))])


async def test_w_round_trip_gives_back_the_same_rows_in_the_same_order(demo: Path, monkeypatch):
    from tui.widgets import status

    monkeypatch.setattr(status, "STILL", True)  # ages do not tick between the two looks
    app = make_app(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        screen = app.screen
        table = screen.query_one("#loops-table")
        before = [table.get_row_at(i) for i in range(table.row_count)]
        keys_before = [table.coordinate_to_cell_key((i, 0)).row_key.value for i in range(table.row_count)]
        built_before = dict(screen._built)
        from textual.widgets import DataTable

        rendered: list[int] = []  # body cells rendered afresh (not from the table's caches)
        real = DataTable._render_cell
        monkeypatch.setattr(DataTable, "_render_cell", lambda self, r, *a, **kw: (
            rendered.append((r, a, kw)) if r >= 0 and self is table else None) or real(self, r, *a, **kw))
        await pilot.press("w")
        await pilot.pause()
        waiting = {s.loop_id for s in app.store.states.values() if s.status in ("waiting_human", "blocked")}
        shown = {table.coordinate_to_cell_key((i, 0)).row_key.value for i in range(table.row_count)}
        assert shown == waiting
        rendered.clear()
        await pilot.press("w")
        await pilot.pause()
        assert [table.get_row_at(i) for i in range(table.row_count)] == before
        # every row is back where it was, as the same cells: drawn from the cells kept by content,
        # but for the rows under the cursor or the mouse when those moved meanwhile
        assert {r for r, _a, _kw in rendered} <= {table.cursor_coordinate.row, table.hover_coordinate.row}
        assert table.row_count > 2
        assert [table.coordinate_to_cell_key((i, 0)).row_key.value for i in range(table.row_count)] == keys_before
        # the rows that came back were not rebuilt: the same cell objects (their ages recomputed)
        for loop_id, (version, cells) in built_before.items():
            now = screen._built[loop_id]
            assert now[0] == version and all(a is b for a, b in zip(now[1][:5], cells[:5]))


async def test_a_loop_that_moved_while_filtered_out_comes_back_redrawn(demo: Path):
    """The rows ``w`` gives back are reused only when their loop did not move in between."""
    from datetime import timedelta

    app = make_app(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        screen = app.screen
        table = screen.query_one("#loops-table")
        done = next(s for s in app.store.states.values() if s.status == "done")
        await pilot.press("w")
        await pilot.pause()
        moved = done.model_copy(update={"iteration": done.iteration + 1, "seq": done.seq + 1,
                                         "updated_at": done.updated_at + timedelta(seconds=1)})
        app.store.apply([moved])
        app._broadcast()
        await pilot.pause()
        await pilot.press("w")
        await pilot.pause()
        row = table.get_row(done.loop_id)
        assert row[3] == f"{done.iteration + 1}/{done.budget.max_iterations}"


# -- render caches -----------------------------------------------------------------------------
async def test_a_table_keeps_only_render_caches_of_its_current_rows(demo: Path):
    app = make_app(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        table = app.screen.query_one("#loops-table")
        for key in ("w", "w", "s", "down", "down"):
            await pilot.press(key)
            await pilot.pause()
        count = table._update_count
        cells = list(table._cell_render_cache.keys())
        assert cells and all(k[6] == count for k in cells)  # the update count is the 7th part
        assert all(k[8] == count for k in table._row_render_cache.keys())
        assert all(k[0] == count for k in table._row_renderable_cache.keys())
        # a cursor move keeps them (the update count did not change): the rows re-render from them
        await pilot.press("down")
        await pilot.pause()
        assert table._update_count == count and set(cells) <= set(table._cell_render_cache.keys())


async def test_a_paint_looks_each_style_up_once_and_draws_what_datatable_draws(demo: Path):
    from textual.css.styles import RenderStyles
    from textual.dom import DOMNode
    from textual.widgets import DataTable

    from tui.widgets.table import RowsTable

    app = make_app(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        ours, plain = RowsTable(zebra_stripes=True), DataTable(zebra_stripes=True)
        for t in (ours, plain):
            await app.screen.mount(t)
            t.styles.height = 8
            for col in ("a", "b"):
                t.add_column(col, key=col, width=6)
            for i in range(12):
                t.add_row(f"a{i}", f"b{i}", key=f"k{i}")
        await pilot.pause()
        walks = []
        real = DOMNode.rich_style.fget
        try:
            DOMNode.rich_style = property(lambda node: walks.append(node) or real(node))  # type: ignore[method-assign]
            region = ours.size.region
            for t in (ours, plain):
                t._clear_caches()  # drawn from scratch, as after a change of rows
            mine = ours.render_lines(region)
            ours_walks = len(walks)
            walks.clear()
            theirs = plain.render_lines(region)
            plain_walks = len(walks)
        finally:
            DOMNode.rich_style = property(real)  # type: ignore[method-assign]
        assert [s.text for s in mine] == [s.text for s in theirs]
        assert [list(s) for s in mine] == [list(s) for s in theirs]  # same segments, same styles
        assert len(mine) == 8
        assert 0 < ours_walks <= 5 and plain_walks >= 2 * len(mine)  # each style once, not once per line
        # outside a paint the styles are read afresh (a theme change is never served stale)
        assert isinstance(ours.get_component_styles("datatable--header"), RenderStyles)
        assert ours.__dict__["_paint_styles"] is None


# -- Checkpoints -------------------------------------------------------------------------------
async def test_a_step_draws_its_entry_once_and_a_quick_move_back_keeps_it(demo: Path):
    app = make_app(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        blocked = loop_of(app, "nightly-ci-green", "blocked")
        screen = await open_history(pilot, app, blocked.loop_id)
        assert len(screen.history[blocked.loop_id]) > 2
        screen.retime = lambda: None  # the age timer redraws the entry too: not what is counted here
        drawn: list[str] = []
        real = screen.render_entry
        screen.render_entry = lambda *a, **kw: drawn.append("x") or real(*a, **kw)
        first = screen.selected_entry().index
        await pilot.press("left_square_bracket")
        await wait_for(pilot, lambda: screen.selected_entry().index != first, what="the step")
        await pilot.pause(0.2)  # longer than the rest delay after which a highlight redraws
        assert len(drawn) == 1  # drawn by the step, not again when the cursor rested
        body = screen.query_one("#entry-body")
        assert f"entry #{screen.selected_entry().index}" in str(body.render())
        # down then back up before the rest delay: the entry shown is the one under the cursor
        tree = screen.query_one("#cp-tree")
        shown = screen.selected_entry().index
        tree.action_cursor_down()
        tree.action_cursor_up()
        await pilot.pause(0.2)
        assert screen.selected_entry().index == shown
        assert f"entry #{shown}" in str(body.render())


# -- garbage collection ------------------------------------------------------------------------
def test_the_idle_collector_waits_for_a_pause_and_looks_at_frozen_objects_now_and_then():
    from tui import idle_gc

    now = [1000.0]
    c = idle_gc.IdleCollector(clock=lambda: now[0])
    frozen0 = gc.get_freeze_count()
    try:
        junk = [[i] for i in range(idle_gc.MIN_NEW + 1000)]  # enough new objects to be worth a pass
        now[0] += idle_gc.EVERY_S + 1
        c.input_seen()  # someone typed just now
        assert not c.tick() and c.collections == 0
        now[0] += idle_gc.IDLE_S + 0.1
        assert c.tick() and c.collections == 1
        assert gc.get_freeze_count() >= frozen0 + len(junk)  # the survivors are frozen
        assert not c.tick()  # not due again yet
        now[0] += idle_gc.FULL_EVERY_S
        assert c.tick() and c.last_full == now[0]  # a full pass unfroze and looked at everything
        del junk
    finally:
        gc.unfreeze()


def test_while_keys_come_full_collections_are_rarer_and_the_pause_restores_them():
    from tui import idle_gc

    now = [1000.0]
    c = idle_gc.IdleCollector(clock=lambda: now[0])
    before = gc.get_threshold()
    try:
        c.input_seen()
        assert gc.get_threshold() == (before[0], before[1], max(before[2], idle_gc.TYPING_GEN2))
        c.input_seen()  # a second key keeps them, and remembers the usual ones, not its own
        now[0] += idle_gc.IDLE_S / 2
        assert not c.tick() and gc.get_threshold()[2] == max(before[2], idle_gc.TYPING_GEN2)
        now[0] += idle_gc.IDLE_S
        c.tick()
        assert gc.get_threshold() == before  # the pause: the usual thresholds again
    finally:
        gc.set_threshold(*before)


async def test_typing_tells_the_idle_collector_and_a_history_is_frozen(demo: Path):
    app = make_app(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        before = app.idle_gc.last_input
        await pilot.press("down")
        await pilot.pause()
        assert app.idle_gc.last_input > before
        frozen = gc.get_freeze_count()
        fork = loop_of(app, "release-notes-0.2", "active")
        await open_history(pilot, app, fork.loop_id)
        assert gc.get_freeze_count() > frozen  # the history (and what came with it) is out of full passes
        assert app.idle_gc.typing_thresholds is not None  # keys came: full collections are rarer now
        usual = app.idle_gc.typing_thresholds
    gc.unfreeze()
    assert gc.get_threshold() == usual  # the app closed: the process has its usual thresholds back
