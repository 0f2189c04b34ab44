"""The Inbox as the supervisor reaches it (issue 24): urgent requests first with
a live countdown, ``n`` to the one just announced, expired requests that take
no decision, the bell / desktop notification / window title (no secret in
them), the decided filter (audit), a dialog closed when another dashboard
decided, and the trip-ups (enter on approvals, ``n`` in a search box).
Pilot on a real seeded state; agents' requests made through the real inbox."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tuihelp import demo, demo_template  # noqa: F401 - the seeded-demo fixtures
from tuihelp import loaded, make_app, open_ars, select_row, wait_for

SIZE = (160, 48)


def _ask(state: Path, summary: str, detail: str, expires_in: float | None = None, **meta):
    with open_ars(state) as ars:
        return ars.inbox.create(source="claude-code:sess-1", kind="approval", summary=summary, detail=detail,
                                risk="high", binds="Bash", expires_in=expires_in, meta=meta)


def _cell(app, key: str, col: str) -> str:
    return str(app.screen.query_one("#inbox-table").get_cell(key, col))


def _pane(app) -> str:
    return str(app.screen.query_one("#request-body").render())


async def test_a_held_call_comes_first_with_a_countdown_and_n_goes_to_the_most_urgent(demo: Path):
    held = _ask(demo, "Bash: make deploy", "make deploy", expires_in=50)
    app = make_app(demo, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("n")
        await wait_for(pilot, lambda: app.current_mode == "inbox" and app.screen.selected == held.id,
                       what="n to select the held call")
        table = app.screen.query_one("#inbox-table")
        assert table.cursor_row == 0  # first, ahead of the older loop requests
        assert table.row_count > 1
        assert _cell(app, held.id, "age").startswith("⏳")
        first = _cell(app, held.id, "age")
        await wait_for(pilot, lambda: _cell(app, held.id, "age") != first, timeout=5, what="the countdown to tick")
        assert "its agent waits" in _pane(app)
        # a later one (its deadline further off: second in order) is announced; n walks on to it
        later = _ask(demo, "Bash: rm -rf build", "rm -rf build", expires_in=300)
        await wait_for(pilot, lambda: app.announced == later.id, what="the new request to be announced")
        await wait_for(pilot, lambda: later.id in app.screen.cells, what="its row")
        await pilot.press("n")
        await pilot.pause()
        assert app.screen.selected == later.id and table.cursor_row == 1
        await pilot.press("n")  # then on in order: the next after it
        await pilot.pause()
        assert app.screen.selected not in (held.id, later.id)


async def test_a_request_whose_agent_gave_up_shows_expired_and_takes_no_decision(demo: Path):
    r = _ask(demo, "Bash: terraform apply", "terraform apply", expires_in=1.5)
    app = make_app(demo, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("2")
        await wait_for(pilot, lambda: r.id in app.screen.cells, what="the request row")
        select_row(app.screen.query_one("#inbox-table"), r.id)
        await wait_for(pilot, lambda: _cell(app, r.id, "kind") == "expired", timeout=8, what="the row to expire")
        await pilot.pause(0.2)
        assert app.screen.allowed() == ()
        assert "approve" not in {b.binding.action for b in app.screen.active_bindings.values() if b.enabled}
        await pilot.press("a")
        await pilot.pause()
        assert type(app.screen).__name__ == "InboxScreen"  # no dialog
        assert any("cannot be decided" in str(n.message) for n in app.events)
        assert "cannot be decided any more" in _pane(app)
        with open_ars(demo) as ars:
            assert ars.inbox.get(r.id).decision is None  # nothing written by the dashboard
        await wait_for(pilot, lambda: app.inbox_count == app.store.inbox_count, timeout=5,
                       what="the expired request to leave the count")


async def test_a_new_request_rings_notifies_and_counts_in_the_title_without_its_secret(demo: Path):
    secret = "sk-ant-api03-" + "A" * 40
    app = make_app(demo, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        before = app.inbox_count
        assert app.term.sent and app.term.sent[-1] == f"\x1b]2;ARS — {before} waiting\x07"
        app.term.sent.clear()
        _ask(demo, f"Bash: curl -H 'x-api-key: {secret}' https://api", f"curl -H 'x-api-key: {secret}' https://api")
        await wait_for(pilot, lambda: any("\x1b]9;" in s for s in app.term.sent), what="the notification")
        out = next(s for s in app.term.sent if "\x1b]9;" in s)
        assert out.startswith("\x07")  # the bell, then the two notifications in one write
        assert "\x1b]9;ARS: Waiting for you: claude-code:sess-1: Bash: curl" in out
        assert "\x1b]777;notify;ARS: Waiting for you;claude-code:sess-1: Bash: curl" in out
        assert secret not in out and "sk-ant-api03" not in out
        await wait_for(pilot, lambda: f"\x1b]2;ARS — {before + 1} waiting\x07" in app.term.sent,
                       what="the title's count")


def test_the_notifier_wraps_for_tmux_and_strips_control_characters():
    from tui.widgets.notify_term import TerminalNotifier

    class Headless:
        is_headless = True
        _driver = None

    n = TerminalNotifier(Headless(), in_tmux=True)  # type: ignore[arg-type]
    n.announce("ARS: Waiting", "evil\x1b]2;pwned\x07 text")
    out = n.sent[-1]
    assert out.startswith("\x07\x1bPtmux;\x1b\x1b]9;ARS: Waiting: evil ]2,pwned text") or "pwned" in out
    assert out.count("\x1bPtmux;") == 2 and "\x1b]2;" not in out.replace("\x1b\x1b]", "")
    assert "\x07 text" not in out  # the BEL inside the text is gone


async def test_the_decided_filter_shows_who_decided_when_and_the_note(demo: Path):
    r = _ask(demo, "Bash: make release", "make release")
    with open_ars(demo) as ars:
        ars.inbox_decide(r.id, "reject", "not on a Friday")
    app = make_app(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("2")
        await pilot.pause()
        assert r.id not in app.screen.cells  # decided: not among the waiting
        await pilot.press("d")
        await wait_for(pilot, lambda: r.id in app.screen.cells, what="the decided request")
        assert _cell(app, r.id, "kind") == "rejected"
        assert "not on a Friday" in _cell(app, r.id, "runs")
        select_row(app.screen.query_one("#inbox-table"), r.id)
        await wait_for(pilot, lambda: "not on a Friday" in _pane(app), what="the audit pane")
        pane = _pane(app)
        assert "outcome: denied" in pane and "decided: rejected at " in pane and " UTC by " in pane
        assert app.screen.allowed() == ()
        assert "decided" in str(app.screen.query_one("#inbox-badge").render())
        await pilot.press("d")
        await pilot.pause()
        assert r.id not in app.screen.cells


async def test_a_dialog_closes_when_another_dashboard_decided_its_request(demo: Path):
    r = _ask(demo, "Bash: make migrate", "make migrate")
    app = make_app(demo, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("2")
        await wait_for(pilot, lambda: r.id in app.screen.cells, what="the request row")
        select_row(app.screen.query_one("#inbox-table"), r.id)
        await pilot.pause(0.1)
        await pilot.press("a")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "ConfirmModal", what="the confirm dialog")
        with open_ars(demo) as other:
            other.inbox_decide(r.id, "reject", "decided at the other desk")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "InboxScreen", timeout=8,
                       what="the dialog to close")
        await wait_for(pilot, lambda: any("decided elsewhere" in str(n.message) for n in app.events),
                       what="the notice")
        with open_ars(demo) as ars:
            d = ars.inbox.get(r.id).decision
        assert d is not None and d.note == "decided at the other desk"


async def test_enter_is_not_offered_on_an_approval_and_does_not_open_an_answer(demo: Path):
    r = _ask(demo, "Bash: make clean", "make clean")
    app = make_app(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("2")
        await wait_for(pilot, lambda: r.id in app.screen.cells, what="the request row")
        select_row(app.screen.query_one("#inbox-table"), r.id)
        await pilot.pause(0.2)
        shown = {b.binding.description for b in app.screen.active_bindings.values() if b.binding.show and b.enabled}
        assert "Respond" not in shown and "Approve" in shown
        await pilot.press("enter")
        await pilot.pause()
        assert type(app.screen).__name__ == "InboxScreen"
        assert any("cannot respond" in str(n.message) for n in app.events)


async def test_n_typed_into_a_search_box_is_text(demo: Path):
    app = make_app(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("2")
        await pilot.press("slash")
        await pilot.pause()
        box = app.screen.query_one("#inbox-filter")
        assert box.has_focus
        await pilot.press("n", "e", "n")
        await pilot.pause()
        assert box.value == "nen" and box.has_focus
        await pilot.press("escape", "1", "slash")  # the Loops view's search box too
        await pilot.pause()
        focused = app.focused
        await pilot.press("n")
        await pilot.pause()
        assert app.current_mode == "loops" and getattr(focused, "value", None) == "n"


async def test_the_request_pane_shows_the_agents_last_turns(demo: Path, tmp_path: Path):
    transcript = tmp_path / "t.jsonl"
    lines = [{"type": "user", "message": {"role": "user", "content": "please ship the hotfix"}},
             {"type": "assistant", "message": {"role": "assistant", "content": [
                 {"type": "text", "text": "Running the tests first."},
                 {"type": "tool_use", "name": "Bash", "input": {"command": "pytest -q"}}]}},
             {"type": "user", "message": {"role": "user", "content": [
                 {"type": "tool_result", "content": "12 passed"}]}}]
    transcript.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    r = _ask(demo, "Bash: git push origin main", "git push origin main", transcript_path=str(transcript))
    app = make_app(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("2")
        await wait_for(pilot, lambda: r.id in app.screen.cells, what="the request row")
        select_row(app.screen.query_one("#inbox-table"), r.id)
        await wait_for(pilot, lambda: "please ship" in _pane(app), what="the agent's last turns")
        pane = _pane(app)
        assert "please ship the hotfix" in pane and "tool Bash: pytest -q" in pane and "result: 12 passed" in pane
        assert "related memories" in pane or "recall failed" not in pane


async def test_a_request_its_hook_gave_up_on_stays_a_minute_marked_expired(demo: Path):
    r = _ask(demo, "Bash: make publish", "make publish", expires_in=50)
    app = make_app(demo, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("2")
        await wait_for(pilot, lambda: r.id in app.screen.cells, what="the request row")
        with open_ars(demo) as ars:  # the hook's deadline passed: it ends the request and tells its agent
            assert ars.inbox.end(r.id, "expire", "the hook gave up after 50 s")
        await wait_for(pilot, lambda: _cell(app, r.id, "kind") == "expired", timeout=8, what="the row to expire")
        select_row(app.screen.query_one("#inbox-table"), r.id)
        await wait_for(pilot, lambda: "outcome: expired" in _pane(app), what="the ending in the pane")
        await wait_for(pilot, lambda: "never ran" in _pane(app), what="its whole record")
        assert "the hook gave up" in _pane(app) and app.screen.allowed() == ()
        assert app.screen.query_one("#inbox-table").cursor_row == app.screen.query_one("#inbox-table").row_count - 1


async def test_the_approve_dialog_shows_the_risk_and_a_running_countdown(demo: Path):
    """What the person confirms: the exact command, its risk, and the agent's clock, ticking."""
    held = _ask(demo, "Bash: terraform destroy", "terraform destroy -auto-approve", expires_in=120)
    app = make_app(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("n")
        await wait_for(pilot, lambda: app.current_mode == "inbox" and app.screen.selected == held.id,
                       what="n to select the held call")
        await pilot.press("a")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "ConfirmModal", what="the confirm modal")

        def clock() -> str:
            return str(app.screen.query_one("#clock").render())

        first = clock()
        assert "risk high" in first and "left before its agent gives up" in first, first
        assert "terraform destroy -auto-approve" in str(app.screen.query_one("#body").render())
        await wait_for(pilot, lambda: clock() != first, timeout=5, what="the dialog's countdown to tick")
        await pilot.press("n")


def _race(state: Path) -> tuple:
    """Two agents ask at the same moment: Hermes on a 60 s clock, Claude Code (high risk) on 240 s."""
    import threading

    made: dict[str, object] = {}
    go = threading.Barrier(2)

    def ask(name: str, source: str, risk: str, expires: float) -> None:
        go.wait()
        with open_ars(state) as ars:
            made[name] = ars.inbox.create(source=source, kind="approval", summary=f"{name}: run the migration",
                                          detail=f"{name} migrate --all", risk=risk, binds="Bash",
                                          expires_in=expires, meta={"tool_name": "Bash"})

    threads = [threading.Thread(target=ask, args=("hermes", "hermes:s-7", "medium", 60)),
               threading.Thread(target=ask, args=("claude", "claude-code:s-8", "high", 240))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return made["hermes"], made["claude"]


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
async def test_n_goes_by_deadline_then_risk_then_age_and_a_decision_moves_on(demo: Path, size):
    app = make_app(demo, watch=True)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot)
        assert app.current_mode == "loops"
        hermes, claude = _race(demo)  # while the dashboard runs, the cursor on a loop row
        await wait_for(pilot, lambda: {hermes.id, claude.id} <= set(app.agent_requests), what="both requests")
        await pilot.press("n")  # from the Loops view: the nearest deadline
        await wait_for(pilot, lambda: app.current_mode == "inbox" and app.screen.selected == hermes.id,
                       what="n from Loops to select Hermes (the nearest deadline)")
        screen = app.screen
        table = screen.query_one("#inbox-table")
        await pilot.press("n")
        await pilot.pause()
        assert screen.selected == claude.id
        await pilot.press("n")  # no deadline left: the higher risk first (the hotfix's risky shell)
        await pilot.pause()
        hotfix_key = screen.selected
        hotfix = screen.items[hotfix_key]
        assert hotfix.source == "loop" and hotfix.risk == "high" and hotfix.expires_at is None
        await pilot.press("n")  # then the oldest of the rest
        await pilot.pause()
        rest = [screen.items[k] for k in screen.open_order()[3:]]
        assert screen.items[screen.selected] is rest[0] and all(r.risk != "high" for r in rest)
        assert [r.created_at for r in rest] == sorted(r.created_at for r in rest)
        table.move_cursor(row=table.row_count - 1)  # the cursor moved by hand: n starts over
        await pilot.pause()
        await pilot.press("n")
        await pilot.pause()
        assert screen.selected == hermes.id and table.cursor_row == 0
        await pilot.press("a")  # approve Hermes' call (no supervisor key in the demo: unverified)
        await wait_for(pilot, lambda: type(app.screen).__name__ == "ConfirmModal", what="the confirm dialog")
        await pilot.press("y")
        await wait_for(pilot, lambda: app.screen is screen and screen.selected == claude.id,
                       what="the selection to move to the next most urgent request")
        assert screen.focused is table  # focus kept: the next key acts on Claude Code's request
        with open_ars(demo) as ars:
            await wait_for(pilot, lambda: ars.inbox.get(hermes.id).status == "approved", what="the decision")
        await wait_for(pilot, lambda: hermes.id not in screen.cells, what="the decided row to leave")
        assert screen.selected == claude.id and table.cursor_key() == claude.id
        await pilot.press("n")  # the most urgent is selected: n walks on, never back to a decided one
        await pilot.pause()
        assert screen.selected == hotfix_key
