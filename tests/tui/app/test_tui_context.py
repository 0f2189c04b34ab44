"""The Context view (6): each agent session's turns and what they were given from memory,
and why a memory the supervisor expected was not given. Pilot, on a seeded demo state
whose receipts come from real ``ARS.context`` calls."""

from __future__ import annotations

from pathlib import Path

from tuihelp import demo, demo_template, loaded, make_app, open_ars, wait_for  # noqa: F401

SIZE = (140, 40)
EXPECTED = "openclaw:8c2d4e1a-5b7f-4c3e-9a10-6f2e8b9d0c41:0"  # the Chinese session about the outage


def turns_of(demo: Path) -> list[str]:
    """Two turns of an OpenClaw session, recorded as its hook records them."""
    with open_ars(demo) as ars:
        first = ars.context("Neo4j outage recall fallback to SQLite", session="oc-7", agent="openclaw", turn="u1")
        ars.context("What is the capital of Australia?", session="oc-7", agent="openclaw", turn="u2")
    assert first.memories
    return [m.episode_id for m in first.memories]


async def test_context_view_shows_each_turn_and_why_an_expected_memory_was_not_given(demo: Path):
    given = turns_of(demo)
    app = make_app(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("6")
        await pilot.pause()
        screen = app.screen
        assert type(screen).__name__ == "ContextScreen"
        await wait_for(pilot, lambda: len(screen.receipts) == 2, what="the session's turns")
        await pilot.pause()
        sessions = screen.query_one("#sessions")
        assert str(sessions.get_row_at(0)[0]) == "oc-7" and str(sessions.get_row_at(0)[1]) == "openclaw"
        turns = screen.query_one("#turns")
        assert [str(turns.get_row_at(i)[0]) for i in range(2)] == ["u1", "u2"]
        assert "nothing" in str(turns.get_row_at(1)[2])
        turns.move_cursor(row=0)
        await pilot.pause()
        detail = str(screen.query_one("#turn-detail").render())
        assert given[0] in detail and "Neo4j outage recall fallback" in detail
        # the supervisor expected another memory: pick it by its id, see why per turn
        await pilot.press("e")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "EpisodePicker", what="the episode picker")
        options = app.screen.query_one("#episodes")
        await pilot.press(*EXPECTED)
        await wait_for(pilot, lambda: options.option_count and options.get_option_at_index(0).id == EXPECTED,
                       what="the typed id")
        options.highlighted = 0
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(screen.why) == 2, what="the reasons")
        await pilot.pause()
        notes = [str(turns.get_row_at(i)[5]) for i in range(2)]
        assert all(n.startswith(("✗", "✓")) for n in notes)
        assert EXPECTED in given or notes[0].startswith("✗")
        turns.move_cursor(row=1)
        await pilot.pause()
        assert "not given" in str(screen.query_one("#turn-detail").render())
        await pilot.press("question_mark")
        await pilot.pause()
        assert type(app.screen).__name__ == "HelpModal"
        assert any("Context (6)" in str(s.render()) for s in app.screen.query(".section"))


async def test_context_view_without_receipts_says_how_to_get_them(demo: Path):
    app = make_app(demo, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("6")
        await pilot.pause()
        await wait_for(pilot, lambda: "No turn got a context" in str(app.screen.query_one("#context-intro").render()),
                       what="the empty view's line")
