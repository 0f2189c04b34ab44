"""Nothing ends silently (issue 32): while the dashboard runs, a request decided in
the CLI, on the web page's path or in another dashboard, one whose agent stopped
waiting, and one withdrawn each give a short toast and a whole line in the event
log (l); this dashboard's own decision is told once, as its own. Pilot at 80x24 on
a seeded demo; the other deciders are real `ars` processes and another ARS."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from textual.widgets._toast import Toast

from conftest import env_without_ars
from tuihelp import demo, demo_template  # noqa: F401 - the seeded-demo fixtures
from tuihelp import loaded, make_app, open_ars, wait_for

ROOT = Path(__file__).resolve().parents[3]


def _ask(state: Path, summary: str, **kw):
    with open_ars(state) as ars:
        return ars.inbox.create(source="claude-code:s-5", kind="approval", summary=summary, detail=summary,
                                risk="medium", binds="Bash", meta={"tool_name": "Bash"}, **kw)


def _events(app, title: str) -> list[str]:
    return [e.message for e in app.events if e.title == title]


async def test_every_ending_gives_a_toast_and_an_event_log_line(demo: Path):
    app = make_app(demo, watch=True)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await loaded(pilot)
        cli = _ask(demo, "Bash: make release")
        gone = _ask(demo, "Bash: terraform plan", expires_in=60)
        left = _ask(demo, "Bash: npm publish")
        await wait_for(pilot, lambda: {cli.id, gone.id, left.id} <= set(app.agent_requests), what="the requests")
        p = subprocess.run([sys.executable, "-m", "tui.cli.main", "inbox", "reject", cli.id, "--reason",
                            "not before the freeze ends", "--state", str(demo)], capture_output=True, text=True,
                           cwd=ROOT, env=env_without_ars(), timeout=120)
        assert p.returncode == 0, p.stderr
        with open_ars(demo) as other:  # another process's hook, and an agent's call that went away
            assert other.inbox_end(gone.id, "expire", "the Claude Code hook waited 50 s and gave up")
            assert other.inbox_withdraw(left.id, "decided in the agent's own prompt")
            hotfix = next(r for r in other.inbox_list("pending") if r.source == "loop" and r.kind == "approval")
            other.inbox_decide(hotfix.id, "approve", "go (from the web page)")  # the loop resumes there
        await wait_for(pilot, lambda: len(_events(app, "Decided elsewhere")) >= 2 and _events(app, "Expired")
                       and _events(app, "Withdrawn"), timeout=20, what="every ending in the event log")
        decided = " ".join(_events(app, "Decided elsewhere"))
        assert f"{cli.id} from claude-code:s-5" in decided and "rejected by " in decided
        assert "not before the freeze ends" in decided
        assert "approved by " in decided and "go (from the web page)" in decided and "req-11" in decided
        [expired] = _events(app, "Expired")
        assert gone.id in expired and "gave up" in expired and "nothing ran" in expired
        [withdrawn] = _events(app, "Withdrawn")
        assert left.id in withdrawn and "agent's own prompt" in withdrawn
        await wait_for(pilot, lambda: list(app.screen.query(Toast)), what="the toasts")
        toasts = [str(t.render()) for t in app.screen.query(Toast)]
        assert all(len(t) <= 60 and "\n" not in t for t in toasts), toasts  # one short line each; the log: whole
        await pilot.press("l")
        await pilot.pause()
        log = str(app.screen.query_one("#event-log-body").render())
        assert "Expired" in log and "Withdrawn" in log and "Decided elsewhere" in log
        # this dashboard's own decision is told as its own, once
        mine = _ask(demo, "Bash: make docs")
        await wait_for(pilot, lambda: mine.id in app.agent_requests, what="the new request")
        await pilot.press("2")
        await wait_for(pilot, lambda: mine.id in app.screen.cells, what="its row")
        app.screen.select(mine.id)
        await pilot.press("a")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "ConfirmModal", what="the confirm dialog")
        await pilot.press("y")
        await wait_for(pilot, lambda: any(mine.id in m for m in _events(app, "Decision recorded")),
                       what="its own notice")
        await pilot.pause(1.5)  # a listing or two later
        assert not any(mine.id in m for m in _events(app, "Decided elsewhere"))
