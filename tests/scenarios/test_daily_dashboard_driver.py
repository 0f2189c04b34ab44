"""The dashboard as a daily driver (issue 12): selection that holds, live
times and counts, notices that do not cover a decision, width for what a
person reads, one inbox for every agent, the Health view, "why was this
missed" in Recall, and the supervisor's habits (sort, one-key filter, history
search, event log, copy an id). Pilot on the seeded demo state; the state
directory is checked from outside."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from tuihelp import demo, demo_template  # noqa: F401 - the seeded-demo fixtures
from tuihelp import (ROOT, copy_state, disk, loaded, loop_of, make_app, open_ars, open_history, search_recall as _search,
                     seed_demo, select_row, settle, wait_for)

SIZE = (160, 48)
GOALS = ROOT / "samples" / "goals"


def screen_name(app) -> str:
    return type(app.screen).__name__


def text_of(widget) -> str:
    return str(widget.render())


def titles(app) -> list[str]:
    return [e.title for e in app.events]


# -- defect 1: actions hit the loop the person selected --------------------------------------------
async def test_the_selection_follows_its_loop_when_another_process_adds_one(demo: Path):
    app = make_app(demo)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        screen = app.screen
        table = screen.query_one("#loops-table")
        target = loop_of(app, "nightly-ci-green", "blocked")
        select_row(table, target.loop_id)
        await settle(pilot)
        under_cursor = lambda: table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value  # noqa: E731
        assert under_cursor() == target.loop_id
        row_before = table.cursor_row
        before = set(app.store.states)
        with open_ars(demo) as other:  # a new loop: newest first, so it sorts in above the selection
            other.loop_start(GOALS / "deploy-hotfix.json")
        await wait_for(pilot, lambda: set(app.store.states) - before and table.row_count == len(app.store.states),
                       what="the new loop's row")
        await settle(pilot)
        assert table.cursor_row == row_before + 1  # the rows moved; the cursor went with its loop
        assert under_cursor() == target.loop_id
        assert target.loop_id in text_of(screen.query_one("#loop-detail-body"))
        await pilot.press("c")
        await wait_for(pilot, lambda: screen_name(app) == "InputModal", what="the cancel dialog")
        assert target.loop_id in text_of(app.screen.query_one("#title"))
        await pilot.press("escape")


async def test_a_new_fork_is_selected_so_R_resumes_the_fork(demo: Path):
    app = make_app(demo)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        original = loop_of(app, "release-notes-0.2", "done")
        screen = await open_history(pilot, app, original.loop_id)
        entries = screen.history[original.loop_id]
        while screen.selected_entry().state.status == "done":
            await pilot.press("left_square_bracket")
            await pilot.pause()
        at = screen.selected_entry().index
        before = set(app.store.states)
        await pilot.press("f")
        (fork_id,) = await wait_for(pilot, lambda: set(app.store.states) - before, what="the fork")
        await wait_for(pilot, lambda: screen._cursor() and screen._cursor()[1] == fork_id, what="the fork selected")
        assert at < entries[-1].index
        await pilot.press("R")
        await wait_for(pilot, lambda: disk(demo, fork_id).status == "done", what="the fork to run")
        assert disk(demo, original.loop_id).status == "done"
        assert not any("is done" in e.message for e in app.events)  # R did not go to the original


# -- defect 2: relative times and panes do not go stale ---------------------------------------------
async def test_ages_and_updated_times_are_redrawn_on_a_timer(demo: Path, monkeypatch):
    from tui.screens import base
    from tui.widgets import status

    monkeypatch.setattr(base, "TICK_S", 0.2, raising=False)
    app = make_app(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        waiting = loop_of(app, "hotfix-1.4.2-staging")
        loops = app.screen
        select_row(app.screen.query_one("#loops-table"), waiting.loop_id)
        await settle(pilot)
        await pilot.press("2")
        await pilot.pause()
        inbox = app.screen
        select_row(inbox.query_one("#inbox-table"), waiting.loop_id)
        await settle(pilot)
        from datetime import datetime, timezone

        monkeypatch.setattr(status, "clock", lambda: datetime.now(timezone.utc) + timedelta(minutes=42),
                            raising=False)
        await wait_for(pilot, lambda: inbox.cells[waiting.loop_id][5] == "42m", what="the inbox age to tick")
        assert "(42m ago)" in text_of(inbox.query_one("#request-body"))
        assert loops.cells[waiting.loop_id][5] != "42m"  # a view out of sight redraws nothing...
        await pilot.press("1")  # ...until it is shown
        await wait_for(pilot, lambda: "updated 42m ago" in text_of(app.screen.query_one("#loop-detail-body")),
                       what="the detail's updated time")
        assert app.screen.cells[waiting.loop_id][5] == "42m"


async def test_the_entry_pane_follows_the_loop_it_shows(demo: Path):
    app = make_app(demo)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        fork = loop_of(app, "release-notes-0.2", "active")
        await pilot.press("4")
        await pilot.pause()
        screen = app.screen
        node = screen.loop_nodes[fork.loop_id]
        node.parent.expand()
        await pilot.pause()
        screen._go(node)
        body = screen.query_one("#entry-body")
        await wait_for(pilot, lambda: "active · iteration" in text_of(body), what="the loop's pane")
        with open_ars(demo) as other:
            assert other.loop_resume(fork.loop_id).status == "done"
        await wait_for(pilot, lambda: "done · iteration" in text_of(body), what="the pane to say done")


# -- defect 3: 80x24 ---------------------------------------------------------------------------------
async def test_notices_never_cover_a_decision_and_the_log_keeps_them(demo: Path):
    app = make_app(demo, watch=False)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await loaded(pilot)
        await pilot.press("2")
        await pilot.pause()
        s = loop_of(app, "hotfix-1.4.2-staging")
        select_row(app.screen.query_one("#inbox-table"), s.loop_id)
        await settle(pilot)
        await pilot.press("a")
        await wait_for(pilot, lambda: screen_name(app) == "ConfirmModal", what="the confirm dialog")
        from textual.widgets._toast import Toast

        for i in range(3):
            app.notify(f"another loop needs you, a long notice number {i} " + "x" * 200, title="Waiting for you")
        await settle(pilot)

        dialog = app.screen.query_one("#dialog").region
        assert all(not t.region.overlaps(dialog) for t in app.screen.query(Toast))
        assert not list(app.screen.query(Toast))  # held while the decision is read
        await pilot.press("n")
        await wait_for(pilot, lambda: list(app.screen.query(Toast)), what="the held notices")
        assert all(len(str(t._notification.message)) <= 140 for t in app.screen.query(Toast))
        assert sum("long notice number" in e.message for e in app.events) == 3
        assert all(len(e.message) > 200 for e in app.events if "long notice" in e.message)  # whole in the log
        await pilot.press("l")
        await pilot.pause()
        log = app.screen.query_one("#event-log")
        assert log.display and "long notice number 2" in text_of(log.query_one("#event-log-body"))


async def test_the_event_log_is_kept_across_runs(demo: Path):
    """A notice of one dashboard run is in the next run's event log (``l``), with its day when
    it was not today; a damaged journal line is skipped, not a reason not to start."""
    app = make_app(demo, watch=False)
    async with app.run_test(size=(120, 30)) as pilot:
        await loaded(pilot)
        app.notify("the first run saw this", title="Approved")
    from tui import event_journal

    with open(demo / event_journal.FILE, "a") as fh:
        fh.write("{not json\n")
        fh.write('{"ts": "2026-01-02T03:04:05+00:00", "severity": "warning", "title": "Expired", '
                 '"message": "an old one"}\n')
    again = make_app(demo, watch=False)
    async with again.run_test(size=(120, 30)) as pilot:
        await loaded(pilot)
        messages = [e.message for e in again.events]
        assert "the first run saw this" in messages and "an old one" in messages
        await pilot.press("l")
        await pilot.pause()
        body = text_of(again.screen.query_one("#event-log").query_one("#event-log-body"))
        assert "the first run saw this" in body and "01-02" in body and "an old one" in body


async def test_recall_at_80x24_one_scrollbar_and_ids_told_apart(demo: Path):
    app = make_app(demo, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await _search(pilot, app, "release notes recall")
        screen = app.screen
        hits = screen.query_one("#hits")
        shown = [str(hits.get_row_at(i)[1]) for i in range(hits.row_count)]
        assert len(set(shown)) == len(shown)  # two chunks of one session never look the same
        assert any(":1" in e or ":2" in e for e in shown) or all(len(e) <= 20 for e in shown)
        pane = screen.query_one("#hit-pane")
        assert not pane.show_horizontal_scrollbar
        assert not hasattr(screen.query_one("#breakdown"), "show_cursor")  # text, not a table with its own bars


async def test_the_newest_loops_show_first_while_the_rest_load(demo: Path, monkeypatch):
    import threading

    from tui import app as app_module

    monkeypatch.setattr(app_module, "FIRST_LOOPS", 3)
    app = make_app(demo, watch=False)
    newest = app.ars.loop_bases()[:3]
    reads: list[list[str] | None] = []
    rest_may_load = threading.Event()
    real = app.ars.loop_list

    def loop_list(bases=None):  # the same listing; the second read (the rest) waits until we have looked
        reads.append(bases)
        if len(reads) == 2:
            rest_may_load.wait(20)
        return real(bases)

    app.ars.loop_list = loop_list
    async with app.run_test(size=(160, 48)) as pilot:
        table = app.screen.query_one("#loops-table")
        await wait_for(pilot, lambda: table.row_count, what="the first loops")
        await pilot.pause()
        assert not app.store.loaded and reads == [newest, app.ars.loop_bases()[3:]]
        # one of the first loops moves while the rest load: the full listing has its new state
        moved = next(s for s in app.store.states.values() if s.status == "active")
        with open_ars(demo) as other:
            other.loop_cancel(moved.loop_id, "cancelled while the dashboard was loading")
        shown = {table.get_row_at(i)[0] for i in range(table.row_count)}
        assert table.row_count == 3 and shown == {app.screen.prefixes.get(i, i) for i in app.store.states}
        assert "3 of 8 loops · loading" in str(app.live_status)
        assert "Loading loops" in text_of(app.screen.query_one("#loops-empty"))
        rest_may_load.set()
        await loaded(pilot)
        assert table.row_count == 8 and "8 loops · " in str(app.live_status) and "of" not in str(app.live_status)
        assert reads[2] == newest and app.store.states[moved.loop_id].status == "aborted"
        assert not app.screen.query_one("#loops-empty").display
        assert titles(app) == []  # what the start found is not news: no notices for the first loops


async def test_the_footer_shows_whole_keys_that_fit_and_always_help(demo: Path):
    from textual.widgets._footer import FooterKey

    app = make_app(demo, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        for view in ("1", "2", "3", "4", "5"):
            await pilot.press(view)
            await pilot.pause()
            footer = app.screen.query_one("ArsFooter")
            await wait_for(pilot, lambda: footer.query(FooterKey), what="the footer's keys")
            shown = [k for k in footer.query(FooterKey) if k.display]
            palette = [k for k in shown if k.has_class("-command-palette")]
            assert len(palette) == 1 and palette[0].region.right == 80  # at the very right edge
            keys = [k for k in shown if k not in palette]
            assert any(k.action == "help" for k in keys)
            assert all(k.region.right <= palette[0].region.x for k in keys)  # none under the palette
            assert all(k.region.width == footer._width(k) - k.styles.margin.width for k in keys)  # whole keys
        await pilot.press("1")
        await pilot.pause()
        footer = app.screen.query_one("ArsFooter")
        left_out = [k for k in footer.query(FooterKey) if not k.display]
        await pilot.resize_terminal(160, 48)
        await wait_for(pilot, lambda: all(k.display for k in footer.query(FooterKey)),
                       what="every key shown at 160 columns")
        assert left_out  # 80 columns had left some out: the widening brought them back


def test_short_ids_keep_the_part_that_differs():
    from tui.widgets.status import short_ids, unique_prefixes

    ids = ["loop:loop-677bb5c13b91:1", "loop:loop-677bb5c13b91:2", "openclaw:s-0412:0"]
    short = short_ids(ids, 18)
    assert short[ids[0]] != short[ids[1]] and short[ids[0]].endswith(":1") and all(len(v) <= 18 for v in short.values())
    prefixes = unique_prefixes(["loop-3612e581d2e4", "loop-3612e5aaaaaa", "loop-433191f05227"])
    assert prefixes == {"loop-3612e581d2e4": "3612e58", "loop-3612e5aaaaaa": "3612e5a", "loop-433191f05227": "433191"}


def test_loop_list_keeps_loop_ids_whole_at_80_columns(demo: Path):
    env = {**os.environ, "COLUMNS": "80", "TERM": "xterm-256color"}
    out = subprocess.run([sys.executable, "-m", "tui.cli.main", "loop", "list", "--state", str(demo)], cwd=ROOT,
                         env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    with open_ars(demo) as ars:
        ids = [s.loop_id for s in ars.loop_list()[0]]
    assert ids and all(i in out.stdout for i in ids)
    assert max(len(line) for line in out.stdout.splitlines()) <= 80


# -- defect 4: width goes to the goal and the snippet ------------------------------------------------
async def test_at_120_columns_the_goal_and_the_snippet_get_the_width(demo: Path):
    from textual.widgets.data_table import ColumnKey

    app = make_app(demo, watch=False)
    async with app.run_test(size=(120, 34)) as pilot:
        await loaded(pilot)
        await settle(pilot)
        table = app.screen.query_one("#loops-table")
        goal = table.columns[ColumnKey("goal")].width
        loop = table.columns[ColumnKey("loop")].width
        assert goal >= 24 and goal > 1.5 * loop
        await _search(pilot, app, "Neo4j outage")
        await settle(pilot)
        hits = app.screen.query_one("#hits")
        assert hits.columns[ColumnKey("snippet")].width >= 20


async def test_the_score_pane_shows_how_the_fused_score_adds_up(demo: Path):
    from rich.console import Console

    app = make_app(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await _search(pilot, app, "Neo4j outage")
        screen = app.screen
        h = screen.selected_hit()
        console = Console(file=io.StringIO(), width=100)
        console.print(screen.score_tables(h))
        text = console.file.getvalue()
        parts = {t: h.breakdown[f"fuse_{t}"] for t in h.per_tier if f"fuse_{t}" in h.breakdown}
        assert len(parts) >= 2
        for t, v in parts.items():
            assert f" {t} " in text and f"{v:.4f}" in text and "fuse_" not in text
        assert f"= fused" in text and f"{h.score:.4f}" in text
        assert abs(sum(parts.values()) - h.score) < 1e-4  # the rows add up to the fused score
        for t, th in h.per_tier.items():  # and each tier's column to its own score
            assert abs(sum(th.breakdown.values()) - th.score) < 1e-2
            assert f"{th.score:.3f}" in text


# -- defect 5 ---------------------------------------------------------------------------------------
async def test_stepping_history_shows_each_entry_from_its_header(demo: Path):
    app = make_app(demo, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        s = loop_of(app, "nightly-ci-green", "blocked")
        screen = await open_history(pilot, app, s.loop_id)
        await settle(pilot)
        pane = screen.query_one("#entry-pane")
        await wait_for(pilot, lambda: pane.max_scroll_y > 0, what="an entry taller than its pane")
        pane.scroll_end(animate=False)
        await settle(pilot)
        assert pane.scroll_y > 0
        await pilot.press("left_square_bracket")
        await settle(pilot)
        assert pane.scroll_y == 0 and "entry #" in text_of(screen.query_one("#entry-body")).splitlines()[0]


async def test_inbox_slash_filters_and_the_footer_shows_only_the_keys_that_apply(demo: Path):
    app = make_app(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("2")
        await pilot.pause()
        inbox = app.screen
        question = loop_of(app, "pilot-vector-store")
        approval = loop_of(app, "hotfix-1.4.2-staging")
        select_row(inbox.query_one("#inbox-table"), question.loop_id)
        await settle(pilot)
        footer = lambda: " ".join(str(w.render()) for w in inbox.query("FooterKey"))  # noqa: E731
        assert "Respond" in footer() and "Approve" not in footer() and "Edit" not in footer()
        await pilot.press("a")  # refused, with the keys it takes
        await pilot.pause()
        assert screen_name(app) == "InboxScreen" and "use enter (respond)" in app.events[-1].message
        select_row(inbox.query_one("#inbox-table"), approval.loop_id)
        await settle(pilot)
        assert "Approve" in footer() and "Edit" in footer()
        await pilot.press("slash")
        await pilot.pause()
        assert screen_name(app) == "InboxScreen" and app.screen.focused.id == "inbox-filter"
        await pilot.press(*"vector")
        await wait_for(pilot, lambda: list(inbox.cells) == [question.loop_id], what="the filter")


async def test_a_reject_that_blocks_is_not_called_resumed(demo: Path):
    app = make_app(demo)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("2")
        await pilot.pause()
        s = loop_of(app, "hotfix-1.4.2-staging")
        select_row(app.screen.query_one("#inbox-table"), s.loop_id)
        await settle(pilot)
        await pilot.press("r")
        await wait_for(pilot, lambda: screen_name(app) == "InputModal", what="the reason box")
        await pilot.press(*"freeze", "enter")
        await wait_for(pilot, lambda: screen_name(app) == "ConfirmModal", what="the confirm")
        await pilot.press("y")
        await wait_for(pilot, lambda: "Loop blocked" in titles(app), what="the notice")
        assert "Loop resumed" not in titles(app)
        assert disk(demo, s.loop_id).status == "blocked"


async def test_empty_state_names_the_state_directory(tmp_path: Path):
    state = tmp_path / "empty"
    state.mkdir()
    app = make_app(state, watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await loaded(pilot)
        assert f"--state {state}" in text_of(app.screen.query_one("#loops-empty"))


# -- build 1: one inbox for every agent --------------------------------------------------------------
async def test_one_inbox_n_from_any_view_approve_with_a_note_and_a_true_count(demo: Path):
    with open_ars(demo) as other:
        req = other.request_approval("claude-code:s-9", "Bash: rm -rf build/", details="rm -rf build/", risk="high")
    app = make_app(demo)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await wait_for(pilot, lambda: req.id in app.agent_requests, what="the agent's request")
        await pilot.press("3")  # from any view
        await pilot.pause()
        await pilot.press("n")
        await wait_for(pilot, lambda: screen_name(app) == "InboxScreen" and app.screen.selected, what="the inbox")
        inbox = app.screen
        table = inbox.query_one("#inbox-table")
        assert table.row_count == app.inbox_count == 4
        assert f"{app.inbox_count} waiting" in text_of(inbox.query_one("#inbox-badge"))
        from core.api import inbox_urgency

        first = min(inbox.items.values(), key=inbox_urgency)  # no deadline here: the higher risk, then the oldest
        assert inbox.current_request().id == first.id and first.risk == "high"
        seen = {inbox.selected}
        for _ in range(3):
            await pilot.press("n")
            await pilot.pause()
            seen.add(inbox.selected)
        assert seen == set(inbox.cells)  # n visits every waiting item
        while inbox.selected != req.id:
            await pilot.press("n")
            await pilot.pause()
        row = inbox.cells[req.id]
        assert row[1] == "claude:s-9" and str(row[3]) == "high" and "rm -rf build/" in str(row[4])
        await pilot.press("a")
        await wait_for(pilot, lambda: screen_name(app) == "ConfirmModal", what="the confirm")
        await pilot.press("tab")
        await pilot.press(*"build dir only")
        await pilot.press("enter")
        await wait_for(pilot, lambda: req.id not in inbox.cells, what="the request decided")
        with open_ars(demo) as other:
            done = other.inbox_get(req.id)
        assert done.status == "approved" and done.decision.note == "build dir only"
        await wait_for(pilot, lambda: app.inbox_count == 3 == table.row_count, what="the count")
        # a loop's approval, with a note, through the same keys
        s = loop_of(app, "hotfix-1.4.2-staging")
        select_row(table, s.loop_id)
        await settle(pilot)
        await pilot.press("a")
        await wait_for(pilot, lambda: screen_name(app) == "ConfirmModal", what="the confirm")
        await pilot.press("tab", *"window open", "enter")
        await wait_for(pilot, lambda: disk(demo, s.loop_id).status == "done", what="the loop to finish")
        assert disk(demo, s.loop_id).decisions[-1].note == "window open"
        await wait_for(pilot, lambda: app.inbox_count == 2 == table.row_count, what="the count")


# -- build 2: health ---------------------------------------------------------------------------------
async def test_health_view_shows_doctor_numbers_live_and_names_what_is_absent(demo: Path):
    app = make_app(demo)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("5")
        await wait_for(pilot, lambda: screen_name(app) == "HealthScreen" and app.screen.report, what="health")
        screen = app.screen
        tiers = screen.query_one("#tiers")
        assert {"neo4j", "sqlite", "files"} <= set(screen.cells)
        assert str(screen.cells["sqlite"][1]) == "ok" and screen.cells["neo4j"][2] == "-"
        body = text_of(screen.query_one("#health-body-text"))
        for words in ("Neo4j breaker", "not configured", "backlog", "drift", "Ledger", "events",
                      "last fsync", "Team (namespace default", "this host", "embedding backlog"):
            assert words in body, words
            backlog = app.ars.sync_status()["embeddings"]["not_embedded"]  # the demo embeds nothing
            assert backlog > 0 and f"embedding backlog: {backlog}" in body
        n = screen.polls
        await wait_for(pilot, lambda: screen.polls > n + 1, what="live polls")
        # its own probe is said apart, never counted as a recall the person ran (issue 24)
        assert not app.recall_samples and not screen.query_one("#latency").data
        assert "this view's probe" in text_of(screen.query_one("#latency-title"))
        # a number core starts to report shows up without a change here
        real = app.ars.health
        app.ars.health = lambda: {**real(), "embedding_backlog": 17, "index_age_s": 3.5}
        await wait_for(pilot, lambda: "index_age_s" in text_of(screen.query_one("#health-body-text")),
                       what="the new key")
        body = text_of(screen.query_one("#health-body-text"))
        assert "embedding backlog: 17" in body and "index_age_s" in body
        assert tiers.row_count == len(real()["tiers"]) == 4  # neo4j, sqlite, dense, files


async def test_health_view_shows_the_team_each_host_and_its_pull_lag(tmp_path: Path, neo4j_uri: str):
    """Two hosts of one namespace on a real Neo4j: this host's Health view names the namespace,
    itself with its push backlog, and the other host with what it has yet to pull."""
    from core.api import ARS
    from tui.app import ArsApp
    from tuihelp import settings

    def team_host(name: str) -> ARS:
        return ARS(settings(tmp_path / name, neo4j_uri=neo4j_uri, namespace="crew", host_id=name))

    with team_host("laptop") as other:
        for i in range(3):
            other.remember(f"laptop note {i}: the staging certificate expires on friday", session_id="s1")
        assert other.sync_run().ok
    here = team_host("server")
    here.remember("server note: rotated the deploy key", session_id="s2")  # not pushed yet
    app = ArsApp(here, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("5")
        await wait_for(pilot, lambda: screen_name(app) == "HealthScreen" and app.screen.report, what="health")
        body = text_of(app.screen.query_one("#health-body-text"))
        assert "Team (namespace crew, this host server" in body
        laptop = next(line for line in body.splitlines() if line.strip().startswith("laptop:"))
        assert "graph 3" in laptop and "here 0" in laptop and "pull lag 3" in laptop and "last pull never" in laptop
        server = next(line for line in body.splitlines() if line.strip().startswith("server:"))
        assert "this host" in server and "push backlog 1" in server
        assert "drift: crew" in body and "{" not in body  # no raw JSON left
    here.close()
    with team_host("server") as again:  # after a sync the other host's lag is gone
        assert again.sync_run().ok
        rows = again.sync_status()["hosts"]
        assert rows["laptop"]["lag"] == 0 and rows["server"]["graph"] == 1


# -- build 3: why was this missed -------------------------------------------------------------------


async def test_k_up_and_down_page_past_the_cut_off_and_explain_a_miss_picked_by_its_content(demo: Path):
    app = make_app(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await _search(pilot, app, "Neo4j outage", k=1)
        screen = app.screen
        assert len(screen.result.hits) == 1
        await pilot.press("plus")
        await wait_for(pilot, lambda: screen.cut == 6 and len(screen.result.hits) > 1, what="k=6")
        await pilot.press("minus")
        await wait_for(pilot, lambda: screen.cut == 1 and len(screen.result.hits) == 1, what="k=1")
        await pilot.press("m")
        await wait_for(pilot, lambda: len(screen.result.hits) > 1, what="the page past the cut-off")
        assert screen.cut == 1
        second = str(screen.query_one("#hits").get_row_at(1)[5])  # the snippet (after score, fit, ranks)
        assert second.startswith("▸ past cut-off")
        missed = "openclaw:8c2d4e1a-5b7f-4c3e-9a10-6f2e8b9d0c41:0"  # the Chinese session about the outage
        await pilot.press("x")
        await wait_for(pilot, lambda: screen_name(app) == "EpisodePicker", what="the picker")
        picker = app.screen
        await pilot.press(*"熔断器")  # words the missed episode holds, not its id
        options = picker.query_one("#episodes")
        await wait_for(pilot, lambda: any(options.get_option_at_index(i).id == missed
                                          for i in range(options.option_count)), what="the search by content")
        options.highlighted = next(i for i in range(options.option_count) if options.get_option_at_index(i).id == missed)
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.explanation is not None, what="the explanation")
        await pilot.pause()
        pane = screen.query_one("#explain-pane")
        assert pane.display and not screen.query_one("#hit-pane").display
        assert pane.border_title == f"Explain {missed}"
        verdict = text_of(screen.query_one("#explain-verdict"))
        assert verdict.startswith("verdict:") and "k=1" in verdict
        sqlite = next(t for t in screen.explanation.tiers if t.tier == "sqlite")
        assert sqlite.stored and "below the cut-off k=1" in sqlite.verdict
        assert "below the cut-off" in text_of(screen.query_one("#explain-table"))


# -- build 4: supervisor habits -----------------------------------------------------------------------
async def test_sort_status_filter_copy_and_the_event_log(demo: Path):
    app = make_app(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        screen = app.screen
        table = screen.query_one("#loops-table")
        order = lambda: [r.key.value for r in table.ordered_rows]  # noqa: E731
        states = app.store.states
        assert order() == [s.loop_id for s in sorted(states.values(), key=lambda s: s.updated_at, reverse=True)]
        await pilot.press("s")  # status: waiting first
        await pilot.pause()
        statuses = [states[i].status for i in order()]
        assert statuses[:3] == ["waiting_human", "waiting_human", "blocked"] and statuses[-1] == "done"
        assert "sorted by status (waiting first)" in text_of(screen.query_one("#loops-mode"))
        await pilot.press("S")
        await pilot.pause()
        assert [states[i].status for i in order()][0] == "done"
        await pilot.press("w")
        await wait_for(pilot, lambda: table.row_count == 3, what="only waiting/blocked")
        assert {states[i].status for i in order()} == {"waiting_human", "blocked"}
        await pilot.press("w")
        await wait_for(pilot, lambda: table.row_count == 8, what="every loop again")
        await pilot.press("down")
        await settle(pilot)
        await pilot.press("y")
        await pilot.pause()
        assert app.clipboard == screen.selected and app.clipboard.startswith("loop-")
        assert any(app.clipboard in e.message for e in app.events)
        await pilot.press("l")
        await pilot.pause()
        assert f"copied loop id {app.clipboard}" in text_of(screen.query_one("#event-log-body"))


async def test_search_every_loops_history_and_open_the_entry(demo: Path):
    app = make_app(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        target = loop_of(app, "vendor-question") if any(s.goal_id == "vendor-question" for s in
                                                        app.store.states.values()) else loop_of(app, "pilot-vector-store")
        await pilot.press("4")
        await pilot.pause()
        await pilot.press("slash")
        await wait_for(pilot, lambda: screen_name(app) == "HistorySearch", what="the history search")
        await pilot.press(*"1,900 USD", "enter")  # a premise of the vendor question
        options = app.screen.query_one("#episodes")
        await wait_for(pilot, lambda: options.option_count, what="the hits")
        assert target.loop_id in str(options.get_option_at_index(0).prompt)
        await pilot.press("enter")
        cp = app.screen
        await wait_for(pilot, lambda: screen_name(app) == "CheckpointsScreen" and cp.selected_entry() is not None
                       and cp.selected_entry().state.loop_id == target.loop_id, what="the entry opened")
        assert "1,900 USD" in cp.selected_entry().model_dump_json()


async def test_health_view_with_neo4j_follows_the_sync_backlog_live(demo: Path, neo4j_uri: str):
    """With a real Neo4j: the tier answers, the breaker is closed, the push
    backlog is the demo's unsynced events; another process drains it and the
    view shows the backlog and the drift at 0 without a key pressed."""
    from core.api import ARS
    from tui.app import ArsApp
    from tuihelp import settings

    app = ArsApp(ARS(settings(demo, neo4j_uri=neo4j_uri)))
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("5")
        screen = app.screen
        await wait_for(pilot, lambda: screen_name(app) == "HealthScreen" and screen.report, what="health")
        # nothing synced yet: the tier answers "empty" (a cold first query may time out first; the view recovers)
        await wait_for(pilot, lambda: str(screen.cells.get("neo4j", ("", ""))[1]) == "empty", timeout=60,
                       what="neo4j answering")
        report = screen.report
        assert report["breaker"]["state"] == "closed"
        backlog = report["sync"]["pending"]
        assert backlog > 0
        body = lambda: text_of(screen.query_one("#health-body-text"))  # noqa: E731
        assert f"backlog {backlog} events" in body() and "closed" in body()
        with ARS(settings(demo, neo4j_uri=neo4j_uri)) as other:
            assert other.sync_run().ok
        await wait_for(pilot, lambda: "backlog 0 events" in body() and "drift 0" in body(), timeout=30,
                       what="the drained backlog, live")
        await wait_for(pilot, lambda: str(screen.cells["neo4j"][1]) == "ok", what="neo4j holding the episodes")
