"""The dashboard with Pilot on the seeded demo state: every view, every key
that writes something, and the state directory checked from outside."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tuihelp import demo, demo_template  # noqa: F401 - the seeded-demo fixtures
from tuihelp import (copy_state, disk, inbox_select, loaded, loop_of, make_app, open_ars, open_history, search_recall as _search,
                     seed_demo, select_row, settle, wait_for)

SIZE = (160, 48)


# -- Loops ---------------------------------------------------------------------------
async def test_loops_view_lists_every_loop_with_its_state(demo: Path):
    app = make_app(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        table = app.screen.query_one("#loops-table")
        assert table.row_count == 8
        statuses = {s.status for s in app.store.states.values()}
        assert statuses == {"initialized", "active", "waiting_human", "blocked", "done", "aborted"}
        blocked = loop_of(app, "nightly-ci-green", "blocked")
        select_row(table, blocked.loop_id)
        body = app.screen.query_one("#loop-detail-body")
        await wait_for(pilot, lambda: "Blockers" in str(body.render()), what="the detail pane")
        text = str(body.render())
        assert "3 consecutive failures" in text
        assert "Hypotheses" in text and "First-principles checks" in text
        assert "✓ decompose" in text or "✗ decompose" in text
        assert app.inbox_count == 3
        header = str(app.screen.query_one("#inbox-badge").render())
        assert "3 waiting" in header


async def test_loops_view_empty_state(tmp_path: Path):
    state = tmp_path / "empty"
    state.mkdir()
    app = make_app(state, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        empty = app.screen.query_one("#loops-empty")
        assert empty.display and "No loops yet" in str(empty.render())
        await pilot.press("2")
        assert "Nothing is waiting for you" in str(app.screen.query_one("#inbox-empty").render())


async def test_live_update_from_another_process_and_notification(demo: Path):
    app = make_app(demo)  # watching the state directory
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        fork = loop_of(app, "release-notes-0.2", "active")
        table = app.screen.query_one("#loops-table")
        before = table.get_row(fork.loop_id)
        # another "process" (its own ARS) resumes the forked loop to done
        with open_ars(demo) as other:
            assert other.loop_resume(fork.loop_id).status == "done"
        await wait_for(pilot, lambda: app.store.states[fork.loop_id].status == "done", what="the watcher")
        await pilot.pause()
        after = table.get_row(fork.loop_id)
        # before: active, and paused while no process ran it yet (issue 24: not "● active" when idle)
        assert after[1].plain.endswith("done") and before[1].plain.endswith(("active", "paused"))
        assert after[0] == before[0]  # the same row, updated in place
        # a loop that turns waiting_human elsewhere raises a notification here
        with open_ars(demo) as other:
            other.loop_start(Path(__file__).parents[3] / "samples" / "goals" / "deploy-hotfix.json")
        await wait_for(pilot, lambda: any("Waiting for you" in (e.title or "") for e in app.events),
                       what="the waiting_human notification")
        assert app.inbox_count == 4


async def test_an_agents_request_counts_and_is_announced(demo: Path):
    """A request from another process (an MCP client, Claude Code's gate)
    raises the header's count and a notification, as a waiting loop does."""
    app = make_app(demo)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        loops_waiting = app.store.inbox_count
        await wait_for(pilot, lambda: app.inbox_count == loops_waiting, what="the first count")
        with open_ars(demo) as other:
            req = other.request_approval("claude-code:s-1", "Bash: rm -rf build/", details="rm -rf build/",
                                         risk="high")
        await wait_for(pilot, lambda: app.inbox_count == loops_waiting + 1, what="the agent's request counted")
        await wait_for(pilot, lambda: any("claude-code:s-1" in str(n.message) for n in app.events),
                       what="the notification")
        with open_ars(demo) as other:
            other.inbox_decide(req.id, "approve")
        await wait_for(pilot, lambda: app.inbox_count == loops_waiting, what="the decided request uncounted")


async def test_switching_views_keeps_the_rendered_rows_and_a_theme_repaints_them(demo: Path):
    """A view switch re-applies styles to every widget; the table keeps the rows it had rendered
    (re-rendering every row made each switch cost a full table paint). A new theme repaints them."""
    app = make_app(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        table = app.screen.query_one("#loops-table")
        await pilot.pause()
        cursor_bg = table.get_component_styles("datatable--cursor").rich_style.bgcolor
        line = table.render_line(table.cursor_row + 1)  # the header is line 0
        assert any(seg.style and seg.style.bgcolor == cursor_bg for seg in line)
        rendered: list[int] = []
        real = table._render_cell
        table._render_cell = lambda *a, **kw: rendered.append(1) or real(*a, **kw)
        for key in ("2", "1", "2", "1"):
            await pilot.press(key)
            await pilot.pause()
        assert app.screen.query_one("#loops-table") is table
        assert rendered == []  # nothing re-rendered: the rows came from the table's cache
        app.theme = "textual-light" if app.theme != "textual-light" else "textual-dark"
        await pilot.pause()
        await pilot.pause()
        new_bg = table.get_component_styles("datatable--cursor").rich_style.bgcolor
        assert new_bg != cursor_bg
        line = table.render_line(table.cursor_row + 1)
        assert rendered and any(seg.style and seg.style.bgcolor == new_bg for seg in line)


# -- Inbox -------------------------------------------------------------------------------
async def _confirm_shown(pilot, app) -> None:
    await wait_for(pilot, lambda: type(app.screen).__name__ == "ConfirmModal", what="the confirm modal")


_inbox_select = inbox_select


async def test_approve_by_keypress_resumes_the_loop_to_its_next_exit(demo: Path):
    app = make_app(demo)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        s = await _inbox_select(pilot, app, "hotfix-1.4.2-staging")
        assert s.status == "waiting_human" and s.pending_approval.kind == "approval"
        await pilot.press("a")
        await _confirm_shown(pilot, app)
        assert not (demo / "approvals").exists()  # nothing written before y
        await pilot.press("y")
        await wait_for(pilot, lambda: app.store.states[s.loop_id].status == "done", what="the loop to finish")
        on_disk = disk(demo, s.loop_id)
        assert on_disk.status == "done" and on_disk.exit_reason.startswith("verified")
        assert [d.kind for d in on_disk.decisions] == ["approve"]
        assert on_disk.iterations[1].action.tool == "shell" and on_disk.iterations[1].result.ok
        assert len(list((demo / "approvals").glob("*.json"))) == 1
        await wait_for(pilot, lambda: app.inbox_count == 2, what="the inbox count")
        assert s.loop_id not in app.screen.cells


async def test_a_loop_run_in_the_dashboard_has_its_episodes_embedded(demo: Path):
    """The loop's own episodes are recallable by meaning without an `ars sync run`: after a
    run the dashboard starts the embedding consumer (one process at a time: .embed.lock)."""
    from core.memory.embed import VECTORS_FILE
    from core.infra.sqlite_lib import sqlite3

    def vectors_of(loop_id: str) -> int:
        path = demo / VECTORS_FILE
        if not path.exists():
            return 0
        conn = sqlite3.connect(path)
        try:
            return conn.execute("SELECT count(*) FROM vectors WHERE episode_id LIKE ?",
                                (f"loop:{loop_id}:%",)).fetchone()[0]
        except sqlite3.OperationalError:
            return 0
        finally:
            conn.close()

    app = make_app(demo)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        s = await _inbox_select(pilot, app, "hotfix-1.4.2-staging")
        assert vectors_of(s.loop_id) == 0  # the seeding ran no embedding
        await pilot.press("a")
        await _confirm_shown(pilot, app)
        await pilot.press("y")
        await wait_for(pilot, lambda: app.store.states[s.loop_id].status == "done", what="the loop to finish")
        await wait_for(pilot, lambda: vectors_of(s.loop_id) > 0, timeout=60, what="the loop's episodes embedded")


async def test_no_at_the_confirmation_writes_nothing(demo: Path):
    app = make_app(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        s = await _inbox_select(pilot, app, "hotfix-1.4.2-staging")
        await pilot.press("a")
        await _confirm_shown(pilot, app)
        await pilot.press("n")
        await settle(pilot, 0.3)
        assert not (demo / "approvals").exists()
        assert disk(demo, s.loop_id).status == "waiting_human"


async def test_reject_asks_for_a_reason_and_the_plan_blocks(demo: Path):
    app = make_app(demo)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        s = await _inbox_select(pilot, app, "hotfix-1.4.2-staging")
        await pilot.press("r")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "InputModal", what="the reason box")
        await pilot.press("enter")  # empty: refused in the modal
        assert type(app.screen).__name__ == "InputModal"
        assert "cannot be empty" in str(app.screen.query_one("#error").render())
        await pilot.press(*"change freeze until Monday")
        await pilot.press("enter")
        await _confirm_shown(pilot, app)
        await pilot.press("y")
        await wait_for(pilot, lambda: app.store.states[s.loop_id].status == "blocked", what="the loop to block")
        on_disk = disk(demo, s.loop_id)
        assert on_disk.decisions[-1].kind == "reject" and on_disk.decisions[-1].note == "change freeze until Monday"
        assert any("change freeze until Monday" in b for b in on_disk.blockers)


async def test_respond_to_a_question_runs_the_loop_with_the_answer(demo: Path):
    app = make_app(demo)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        s = await _inbox_select(pilot, app, "pilot-vector-store")
        await pilot.press("a")  # not allowed on a question: told, nothing opens
        await pilot.pause()
        assert type(app.screen).__name__ == "InboxScreen"
        await pilot.press("enter")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "InputModal", what="the answer box")
        await pilot.press(*"600")
        await pilot.press("enter")
        await _confirm_shown(pilot, app)
        await pilot.press("y")
        await wait_for(pilot, lambda: app.store.states[s.loop_id].status == "done", what="the loop to finish")
        on_disk = disk(demo, s.loop_id)
        assert on_disk.answers[-1].answer == "600"
        assert "600 USD" in on_disk.iterations[-1].result.output or "600" in json.dumps(
            on_disk.iterations[-1].action.args, ensure_ascii=False)


async def test_edit_the_proposed_action_then_approve(demo: Path):
    app = make_app(demo)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        s = await _inbox_select(pilot, app, "hotfix-1.4.2-staging")
        await pilot.press("e")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "InputModal", what="the args box")
        box = app.screen.query_one("#answer")
        box.value = "not json"
        await pilot.press("enter")
        assert "not JSON" in str(app.screen.query_one("#error").render())
        box.value = json.dumps({"cmd": "echo edited-dry-run"})
        await pilot.press("enter")
        await _confirm_shown(pilot, app)
        await pilot.press("y")
        await wait_for(pilot, lambda: app.store.states[s.loop_id].status == "done", what="the loop to finish")
        on_disk = disk(demo, s.loop_id)
        assert on_disk.decisions[-1].kind == "edit"
        assert on_disk.iterations[1].action.args == {"cmd": "echo edited-dry-run"}
        assert "edited-dry-run" in on_disk.iterations[1].result.output


async def test_record_only_leaves_the_run_to_another_process(demo: Path):
    app = make_app(demo, resume_in_process=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        s = await _inbox_select(pilot, app, "hotfix-1.4.2-staging")
        await pilot.press("a")
        await _confirm_shown(pilot, app)
        await pilot.press("y")
        await wait_for(pilot, lambda: list((demo / "approvals").glob("*.json")), what="the decision file")
        await settle(pilot, 0.3)
        assert disk(demo, s.loop_id).status == "waiting_human"  # recorded, not applied
        with open_ars(demo) as other:  # the process that runs the loop applies it
            assert other.loop_resume(s.loop_id).status == "done"


# -- Recall --------------------------------------------------------------------------------


async def test_recall_shows_per_tier_ranks_and_components(demo: Path):
    app = make_app(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await _search(pilot, app, "Neo4j outage")
        screen = app.screen
        hits = screen.query_one("#hits")
        labels = [str(c.label) for c in hits.columns.values()]
        assert labels[3] == "fit" and labels[4] == "n·s·f"  # the absolute fit, then each tier's rank
        assert str(hits.get_row_at(0)[3]).startswith("2/2")  # both words of the query in the top hit
        first = hits.get_row_at(0)
        assert str(first[1]) == "openclaw:s-0412:0"
        h = screen.result.hits[0]
        assert str(first[4]) == "·".join(str(h.per_tier[t].rank) if t in h.per_tier else "-"
                                         for t in ("neo4j", "sqlite", "files"))
        assert str(first[4]).startswith("-·1·")  # neo4j skipped, sqlite first
        tierbar = str(screen.query_one("#tierbar").render())
        # the demo state has no Neo4j: the bar says why it sat out, as ars recall's tier line does
        assert "neo4j skipped (not configured)" in tierbar and "sqlite ok" in tierbar and "files ok" in tierbar
        from rich.console import Console
        import io

        console = Console(file=io.StringIO(), width=120)
        console.print(screen.score_tables(h))
        text = console.file.getvalue()
        assert all(c in text for c in ("bm25", "scan", "token_match", "= tier score", "sqlite", "= fused"))
        assert "fuse_" not in text  # each tier named whole (at 80 columns "fuse_s…" said nothing)


async def test_recall_says_degraded_plainly(demo: Path):
    app = make_app(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        app.ars.memory.deadlines["files"] = 0.0  # the files tier cannot answer in time
        await _search(pilot, app, "Neo4j outage")
        tierbar = str(app.screen.query_one("#tierbar").render())
        assert "files timeout" in tierbar and "DEGRADED" in tierbar


async def test_explain_names_the_cut_off(demo: Path):
    app = make_app(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await _search(pilot, app, "Neo4j outage", k=1)
        missed = "openclaw:8c2d4e1a-5b7f-4c3e-9a10-6f2e8b9d0c41:0"  # the Chinese session about the outage
        assert missed not in [h.episode_id for h in app.screen.result.hits]
        await pilot.press("x")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "EpisodePicker", what="the episode picker")
        options = app.screen.query_one("#episodes")
        assert options.get_option_at_index(options.highlighted).id == "openclaw:s-0412:0"  # the selected hit
        await pilot.press(*missed)  # an id typed whole is offered as it is
        await wait_for(pilot, lambda: options.option_count and options.get_option_at_index(0).id == missed,
                       what="the typed id")
        options.highlighted = 0
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen.explanation is not None, what="the explanation")
        await pilot.pause()
        ex = app.screen.explanation
        sqlite = next(t for t in ex.tiers if t.tier == "sqlite")
        assert sqlite.stored and sqlite.rank > 1 and "below the cut-off k=1" in sqlite.verdict
        shown = str(app.screen.query_one("#explain-verdict").render())
        assert shown.startswith("verdict:") and "below the cut-off k=1" in shown and "matched but ranked" in shown
        assert app.screen.query_one("#explain-pane").display


# -- Checkpoints ------------------------------------------------------------------------------
async def test_history_steps_with_brackets_and_shows_the_diff(demo: Path):
    app = make_app(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        s = loop_of(app, "hotfix-1.4.2-staging")
        screen = await open_history(pilot, app, s.loop_id)
        entries = screen.history[s.loop_id]
        assert screen.selected_entry().index == entries[-1].index  # the newest
        await pilot.press("left_square_bracket")
        await pilot.pause()
        assert screen.selected_entry().index == entries[-2].index
        body = str(screen.query_one("#entry-body").render())
        assert f"changes since #{entries[-3].index}" in body and "current_step" in body
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert screen.selected_entry().index == entries[-1].index
        body = str(screen.query_one("#entry-body").render())
        assert "status: active → waiting_human" in body and "pending_approval" in body
        changed = [line.split(":")[0].split()[-1] for line in body.splitlines() if line.startswith("  ")]
        assert not {"elapsed_s", "seq", "ledger_mark", "updated_at"} & set(changed), changed  # no bookkeeping
        assert "(and the bookkeeping: seq" in body  # only counted
        for _ in range(len(entries) + 2):
            await pilot.press("left_square_bracket")
        await pilot.pause()
        assert screen.selected_entry().index == entries[0].index  # stops at the oldest
        assert "first entry kept" in str(screen.query_one("#entry-body").render())


async def test_fork_from_an_entry_creates_a_loop_with_its_parent(demo: Path):
    app = make_app(demo)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        s = loop_of(app, "nightly-ci-green", "blocked")
        screen = await open_history(pilot, app, s.loop_id)
        entries = screen.history[s.loop_id]
        await pilot.press("left_square_bracket", "left_square_bracket")  # before it blocked
        await pilot.pause()
        at = screen.selected_entry()
        assert at.index == entries[-3].index and at.state.status == "active"
        before = set(app.store.states)
        await pilot.press("f")
        new_ids = await wait_for(pilot, lambda: set(app.store.states) - before, what="the forked loop")
        (fork_id,) = new_ids
        forked = disk(demo, fork_id)
        assert forked.parent.loop_id == s.loop_id and forked.parent.index == at.index
        assert forked.status == "active" and forked.goal_id == s.goal_id
        assert disk(demo, s.loop_id).status == "blocked"  # the original is untouched
        await wait_for(pilot, lambda: fork_id in screen.loop_nodes, what="the new node in the tree")


async def test_resume_runs_a_loop_to_its_next_exit(demo: Path):
    app = make_app(demo)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        fork = loop_of(app, "release-notes-0.2", "active")
        screen = await open_history(pilot, app, fork.loop_id)
        assert screen is app.screen
        await pilot.press("R")
        await wait_for(pilot, lambda: app.store.states[fork.loop_id].status == "done", what="the run")
        assert disk(demo, fork.loop_id).status == "done"
        done = loop_of(app, "release-notes-0.2", "done")
        await pilot.press("f")  # on the done loop's entries fork refuses a terminal entry; nothing breaks
        assert done.status == "done"


# -- habits ---------------------------------------------------------------------------------------
async def test_number_keys_help_and_palette(demo: Path):
    app = make_app(demo, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        for key, name in (("2", "InboxScreen"), ("3", "RecallScreen"), ("4", "CheckpointsScreen"),
                          ("5", "HealthScreen"), ("1", "LoopsScreen")):
            await pilot.press(key)
            await pilot.pause()
            assert type(app.screen).__name__ == name
        await pilot.press("question_mark")
        await pilot.pause()
        assert type(app.screen).__name__ == "HelpModal"
        await pilot.press("escape")
        await pilot.press("slash")  # the loops filter
        await pilot.pause()
        assert app.screen.focused.id == "loops-filter"
        await pilot.press(*"blocked")
        table = app.screen.query_one("#loops-table")
        await wait_for(pilot, lambda: table.row_count == 1, what="the filter")
        await pilot.press("escape")
        await wait_for(pilot, lambda: table.row_count == 8, what="the filter cleared")
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert type(app.screen).__name__ == "CommandPalette"
        await pilot.press(*"Inbox")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "InboxScreen", what="the palette's command")
