"""What the supervisor tripped over (issue 24), one test each: an idle active
loop called active, a filter hiding rows while the header counts all, the
header cut at 80 columns, Health's values cut at 120 columns and its "last ok
never" without Neo4j, the Checkpoints tree losing its selection on a resize,
the demo claiming Neo4j answered, and recall hits that look certain when weak.
Pilot on a real seeded demo."""

from __future__ import annotations

import json
from pathlib import Path

from tuihelp import demo, demo_template  # noqa: F401 - the seeded-demo fixtures
from tuihelp import ROOT, loaded, loop_of, make_app, open_history, search_recall, settle, wait_for


def _text(widget) -> str:
    return str(widget.render())


async def test_an_active_loop_nobody_runs_is_shown_paused(demo: Path):
    app = make_app(demo, watch=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        fork = loop_of(app, "release-notes-0.2", "active")
        assert fork.loop_id not in app.running
        cell = str(app.screen.query_one("#loops-table").get_cell(fork.loop_id, "status"))
        assert cell == "◌ paused"
        app.screen.query_one("#loops-table").move_cursor(row=app.screen.query_one("#loops-table")
                                                         .get_row_index(fork.loop_id))
        await settle(pilot)
        detail = _text(app.screen.query_one("#loop-detail-body"))
        assert "◌ paused" in detail and "● active" not in detail


async def test_a_filter_says_how_many_it_leaves_beside_the_count(demo: Path):
    app = make_app(demo, watch=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        total = len(app.store.states)
        await pilot.press("w")  # only waiting/blocked
        await pilot.pause()
        badge = _text(app.screen.query_one("#inbox-badge"))
        shown = len(app.screen.cells)
        assert shown < total and f"{shown} of {total} loops shown" in badge
        await pilot.press("w")
        await pilot.pause()
        assert "shown" not in _text(app.screen.query_one("#inbox-badge"))
        await pilot.press("2", "slash", *"vector")
        await wait_for(pilot, lambda: len(app.screen.cells) == 1, what="the inbox filter")
        assert "1 of 3 waiting shown" in _text(app.screen.query_one("#inbox-badge"))


async def test_the_header_at_80_columns_keeps_whose_decisions_count_whole(demo: Path):
    app = make_app(demo, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.pause()
        trust = app.screen.query_one("#trust")
        text = _text(trust)
        assert text == "⚠ unverified"
        assert trust.region.right <= 80 and trust.content_region.width >= len(text)
        badge = app.screen.query_one("#inbox-badge")
        assert "3 waiting" in _text(badge) and badge.region.right <= trust.region.x
        await pilot.press("slash")  # a filter that leaves one loop shown: the badge says so, the trust stays
        for ch in "hotfix":
            await pilot.press(ch)
        mode = app.screen.query_one("#loops-mode")
        await wait_for(pilot, lambda: "1 of 8 loops shown" in _text(mode), what="the filter's count")
        await pilot.pause(0.2)
        assert "3 waiting" in _text(badge) and _text(trust) == "⚠ unverified"  # what waits, first
        assert badge.region.right <= trust.region.x and trust.region.right <= 80


async def test_at_80_columns_the_header_shows_the_check_words_with_a_key_and_what_waits(demo: Path):
    from core.inbox import signing

    signing.init(demo, b"the supervisor's passphrase at 80")
    app = make_app(demo, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.pause()
        trust, badge = app.screen.query_one("#trust"), app.screen.query_one("#inbox-badge")
        check = app.key_guard.check
        assert _text(trust) == check  # the words the passphrase prompt shows, whole
        assert trust.region.right <= 80 and trust.content_region.width >= len(check)
        assert "3 waiting" in _text(badge) and badge.region.right <= trust.region.x


async def test_health_at_120_columns_shows_every_value_whole_and_no_last_ok_without_neo4j(demo: Path):
    app = make_app(demo, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        await pilot.press("5")
        await wait_for(pilot, lambda: getattr(app.screen, "report", None), what="the health report")
        await settle(pilot)
        table = app.screen.query_one("#tiers")
        from textual.widgets.data_table import ColumnKey

        width = table.columns[ColumnKey("detail")].get_render_width(table) - 2 * table.cell_padding
        for name, cells in app.screen.cells.items():
            assert len(str(cells[3])) <= width, f"{name}'s detail is cut: {cells[3]}"
        title = app.screen.query_one("#latency-title")
        assert title.size.height >= 1 and "probe" in _text(title)
        body = _text(app.screen.query_one("#health-body-text"))
        neo4j = body.split("Sync to Neo4j", 1)[1].split("Team", 1)[0]  # its section, not the embedder's
        assert "last ok" not in neo4j and "neo4j not configured" in neo4j


async def test_the_checkpoints_tree_keeps_its_selection_in_sight_after_a_resize(demo: Path):
    app = make_app(demo, watch=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        s = loop_of(app, "nightly-ci-green")
        screen = await open_history(pilot, app, s.loop_id)
        tree = screen.query_one("#cp-tree")
        await pilot.resize_terminal(80, 16)
        await settle(pilot, 0.4)
        node = tree.cursor_node
        assert node is not None and node.line >= 0
        top = tree.scroll_offset.y
        assert top <= tree.cursor_line < top + tree.scrollable_content_region.height, \
            (tree.cursor_line, top, tree.scrollable_content_region.height)


def test_the_demo_does_not_claim_neo4j_answered():
    goals = ROOT / "samples" / "goals"
    for path in goals.glob("*.json"):
        for step in json.loads(path.read_text()).get("script", []):
            reason = str(step.get("reason", "")).lower()
            assert not ("neo4j" in reason and "answered" in reason and "nothing was asked" not in reason), \
                f"{path.name}: {reason}"


async def test_recall_hits_carry_an_absolute_fit_beside_the_normalised_score(demo: Path):
    app = make_app(demo, watch=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        await search_recall(pilot, app, "Neo4j outage")
        table = app.screen.query_one("#hits")
        top = app.screen.result.hits[0]
        assert str(table.get_cell(top.episode_id, "fit")).startswith("2/2")
        await search_recall(pilot, app, "zebra quasar")  # nothing matches: no hits, no weak banner lie
        assert not app.screen.result.hits or "WEAK" in _text(app.screen.query_one("#tierbar"))


async def test_a_notice_is_one_line_at_the_top_right_and_held_over_a_dialog(demo: Path):
    from textual.widgets._toast import Toast

    app = make_app(demo, watch=False)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await loaded(pilot)
        await pilot.press("2")
        await pilot.pause()
        app.notify("a long notice " * 20, title="Waiting for you (n)", severity="warning")
        await wait_for(pilot, lambda: list(app.screen.query(Toast)), what="the toast")
        await settle(pilot)
        (toast,) = list(app.screen.query(Toast))
        region = toast.region
        assert region.height == 1 and region.y <= 2 and region.right >= 118, region
        pane = app.screen.query_one("#request").region
        assert not region.overlaps(pane)  # the Request pane is never covered
        assert app.events[-1].message.count("a long notice") == 20  # the event log keeps it whole
        from tuihelp import select_row

        select_row(app.screen.query_one("#inbox-table"), loop_of(app, "hotfix-1.4.2-staging").loop_id)
        await settle(pilot)
        await pilot.press("a")  # a dialog: notices wait until it closes
        await wait_for(pilot, lambda: type(app.screen).__name__ == "ConfirmModal", what="the dialog")
        app.notify("while deciding", title="Later")
        await pilot.pause()
        assert not [t for t in app.screen.query(Toast) if "while deciding" in str(t.render())]
        await pilot.press("n")
        # after the dialog: one toast, the newest ("nothing written"); the held notice is in the log
        await wait_for(pilot, lambda: any("nothing written" in str(t.render()) for t in app.screen.query(Toast)),
                       what="the toast after the dialog")
        assert len(list(app.screen.query(Toast))) == 1
        assert any(e.message == "while deciding" for e in app.events)


def test_a_fork_has_one_history_entry_as_the_readme_says(demo: Path):
    """The README said a fork copies the history up to its entry; it starts one of its own there."""
    from tuihelp import open_ars

    with open_ars(demo) as ars:
        done = next(s for s in ars.loop_list()[0] if s.goal_id == "release-notes-0.2" and s.status == "done")
        entries = ars.loop_history(done.loop_id)
        at = next(e.index for e in entries if e.state.status not in ("done", "aborted") and e.index > 1)
        fork = ars.loop_fork(done.loop_id, at)
        history = ars.loop_history(fork.loop_id)
    assert len(history) == 1 and fork.parent.loop_id == done.loop_id and fork.parent.index == at
    readme = (ROOT / "README.md").read_text()
    assert "its own history begins there, one entry" in " ".join(readme.split())
    assert "copies a loop's history up to the entry" not in " ".join(readme.split())
