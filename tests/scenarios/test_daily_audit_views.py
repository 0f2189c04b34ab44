"""One true record per request (issue 32): whatever its kind and wherever it was
decided, the dashboard's decided filter (``d``), ``ars inbox show``, ``ars inbox
list --all``, the web page's card and ``ars export --audit`` say the same thing:
the kind, the risk, exactly what ran, when it was asked, when and by whom it was
decided (the signature checked, a web-signed one too), the note, and what
happened next. Real processes: the CLI, ``ars serve`` over HTTP, the dashboard
under Pilot, on a seeded demo state with a supervisor key, in a zone that is not
UTC (every view must show the same local time)."""

from __future__ import annotations

import html as htmllib
import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from core.api import ARS, audit_lines
from core.config import Settings

from conftest import env_without_ars, passphrase_pipe
from tuihelp import demo, demo_template  # noqa: F401 - the seeded-demo fixtures
from tuihelp import loaded, make_app, select_row, wait_for

ROOT = Path(__file__).resolve().parents[2]
PASS = "correct horse battery"
ZONE = "Asia/Shanghai"  # UTC+8, named CST: a local time differs from UTC in every view


@pytest.fixture
def shanghai(monkeypatch):
    monkeypatch.setenv("TZ", ZONE)
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def _env() -> dict:
    return {**env_without_ars(), "ARS_RECALL_DAEMON": "off", "TZ": ZONE, "COLUMNS": "400"}


def cli(state: Path, *args: str, passphrase: bool = False) -> str:
    with passphrase_pipe(PASS if passphrase else None) as pp:  # a socket: ars refuses a pipe
        p = subprocess.run([sys.executable, "-m", "tui.cli.main", *args, "--state", str(state), *pp.args],
                           capture_output=True, text=True, cwd=ROOT, env=_env(), pass_fds=pp.fds, timeout=120)
    assert p.returncode == 0, (args, p.stdout, p.stderr)
    return p.stdout


def flat(text: str) -> str:
    return " ".join(str(text).split())


def wanted(rec) -> list[str]:
    return [flat(f"{label}: {text}") for label, text in audit_lines(rec)]


URL_LINE = re.compile(r"open (http://\S+/\?token=(\S+))")


class Served:
    """``ars serve`` as a real process on a free port."""

    def __init__(self, state: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "tui.cli.main", "serve", "--state", str(state),
                                      "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     cwd=ROOT, env=_env())
        m = URL_LINE.search(self.proc.stdout.readline())
        if m is None:
            self.proc.kill()
            raise AssertionError(f"ars serve printed no URL: {self.proc.stderr.read()!r}")
        self.token = m.group(2)
        self.base = m.group(1).split("/?token=")[0]

    def http(self, path: str, data: dict | None = None, cookie: str = "") -> tuple[int, str, dict]:
        headers = {"Cookie": cookie or f"ars_serve_token={self.token}", "Accept": "application/json"}
        body = None
        if data is not None:
            body, headers["Content-Type"] = json.dumps(data).encode(), "application/json"
        req = urllib.request.Request(self.base + path, data=body, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                return resp.status, resp.read().decode(), dict(resp.headers)
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode(), dict(exc.headers)

    def page(self) -> tuple[str, str, str]:
        """(the cookie of a fresh page session, its CSRF token, the page)."""
        code, body, headers = self.http("/")
        assert code == 200, body
        session = re.search(r"ars_serve_session=([^;]+)", headers["Set-Cookie"]).group(1)
        csrf = re.search(r'<meta name="csrf" content="([^"]+)"', body).group(1)
        return f"ars_serve_token={self.token}; ars_serve_session={session}", csrf, body

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _web_decide(s: Served, rid: str, verdict: str, note: str) -> None:
    cookie, csrf, page = s.page()
    shown = re.search(rf'data-id="{re.escape(rid)}".*?name="shown" value="([^"]+)"', page, re.S).group(1)
    code, body, _ = s.http("/decide", {"csrf": csrf, "id": rid, "shown": shown, "verdict": verdict, "note": note,
                                       "passphrase": PASS}, cookie)
    assert code == 200, body


def _web_cards(s: Served, ids: list[str]) -> dict[str, str]:
    cookie, _csrf, _page = s.page()
    code, body, _ = s.http("/api/requests?known=" + ",".join(ids), cookie=cookie)
    assert code == 200, body
    return {c["id"]: c["html"] for c in json.loads(body)["cards"]}


def _card_lines(card: str) -> list[str]:
    pairs = re.findall(r"<dt>(.*?)</dt><dd[^>]*>(.*?)</dd>", card, re.S)
    return [flat(f"{htmllib.unescape(k)}: {htmllib.unescape(v)}") for k, v in pairs]


async def test_every_view_tells_each_request_the_same_way(demo: Path, shanghai):  # noqa: F811
    state = demo
    with ARS(Settings(state_dir=state)) as a:
        fp = a.supervisor_init(PASS.encode())
        waiting = {r.kind: r for r in a.inbox_list("pending")}
        call = a.request_approval("claude-code:sess-9", "Bash: make deploy (held: deploys)", "make deploy",
                                  risk="high", binds="Bash", meta={"tool_name": "Bash", "session_id": "sess-9"})
        ask = a.request_approval("mcp:cursor", "Which region should the replica go to?", "", kind="question",
                                 binds="mcp")
        gone = a.request_approval("claude-code:sess-9", "Bash: rm -rf build", "rm -rf build", binds="Bash",
                                  meta={"tool_name": "Bash"}, expires_in=60)
    assert set(waiting) == {"approval", "question", "blocker"}
    hotfix, vendor, flaky = waiting["approval"], waiting["question"], waiting["blocker"]

    s = Served(state)  # started after the key exists: it pins it
    try:
        _web_decide(s, hotfix.id, "approve", "ship it from my phone")  # signed on the web page
        cli(state, "inbox", "respond", vendor.id, "500 USD a month", passphrase=True)  # signed in the terminal
        cli(state, "inbox", "reject", flaky.id, "--reason", "stop: the CI runner is being replaced", passphrase=True)
        cli(state, "inbox", "approve", call.id, "--note", "deploy window is open", passphrase=True)
        cli(state, "inbox", "respond", ask.id, "eu-west-1", passphrase=True)
        with ARS(Settings(state_dir=state)) as a:
            a.inbox_end(gone.id, "expire", "the hook waited 50 s and gave up")
        # what the agent's post-tool hook records after the approved call ran (h-capture's outcome file)
        (state / "inbox" / f"{call.id}.outcome.json").write_text(json.dumps(
            {"ran": True, "ok": True, "exit": 0, "status": "exit 0", "output": "deployed 3 services",
             "by": "claude-code PostToolUse", "at": "2026-12-05T12:08:09+00:00"}))
        ids = [hotfix.id, vendor.id, flaky.id, call.id, ask.id, gone.id]
        with ARS(Settings(state_dir=state)) as a:
            records = {i: a.inbox_audit(i) for i in ids}
        cards = _web_cards(s, ids)
    finally:
        s.stop()

    # the record itself is right (the faults the issue found)
    h = records[hotfix.id]
    assert h.request.risk == "high" and h.kind == "approval"
    assert h.request.detail == "echo 'staging: restarted ars-recall on 1.4.2 (dry run)'"
    assert h.request.created_at < h.request.decision.decided_at
    assert h.signature == "verified", h.signature_line
    assert h.next.startswith("ran and finished") and "staging: restarted" in h.output
    assert (records[vendor.id].kind, records[flaky.id].kind) == ("question", "blocker")
    assert records[flaky.id].next.startswith("never ran: rejected")
    c = records[call.id]
    assert c.kind == "agent call" and c.tool == "Bash" and c.signature == "verified"
    assert c.next.startswith("ran and finished: exit 0") and c.output == "deployed 3 services"
    assert records[gone.id].outcome == "expired" and records[gone.id].signature == ""
    assert all(r.signature == "verified" for i, r in records.items() if i != gone.id)
    asked = dict(audit_lines(h))["asked"]
    assert asked.endswith(" CST") and asked[11:13] == f"{(h.request.created_at.hour + 8) % 24:02d}"

    show = {i: flat(cli(state, "inbox", "show", i)) for i in ids}
    every = flat(cli(state, "inbox", "list", "--all"))
    exported = {x["id"]: x for x in map(json.loads, cli(state, "export", "--audit").splitlines())}
    for i in ids:
        rec = records[i]
        for line in wanted(rec):
            assert line in show[i], (i, line, show[i])
            assert line in every, (i, line)
        assert _card_lines(cards[i]) == wanted(rec), i
        assert exported[i]["audit"] == json.loads(rec.model_dump_json(exclude={"request"})), i
        assert exported[i]["detail"] == rec.request.detail and exported[i]["risk"] == rec.request.risk

    app = make_app(state, watch=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        await pilot.press("2")
        await pilot.press("d")
        await wait_for(pilot, lambda: all(i in app.screen.cells for i in ids), what="every decided request")
        for i in ids:
            select_row(app.screen.query_one("#inbox-table"), i)
            await wait_for(pilot, lambda: f"request: {i}" in flat(app.screen.query_one("#request-body").render()),
                           what=f"the record of {i}")
            pane = flat(app.screen.query_one("#request-body").render())
            for line in wanted(records[i]):
                assert line in pane, (i, line, pane)
    assert fp
