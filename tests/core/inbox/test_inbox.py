"""The inbox (core/inbox, `ars inbox`): one record per request for a person,
decided exactly once, across processes; a loop's open request is the same
record through `ars inbox` and `ars loop`. Real processes and files throughout."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from core.api import ARS, BadInput
from core.config import Settings
from core.inbox import AlreadyDecided, Inbox, UnknownRequest
from core.inbox.store import new_request_id
from core.ledger.ledger import Ledger
from core.errors import BadQuery

from loophelp import ROOT, ars, engine, goal
from conftest import env_without_ars


@pytest.fixture
def state(tmp_path) -> Path:
    s = tmp_path / "state"
    s.mkdir()
    return s


def _ars(state: Path) -> ARS:
    return ARS(Settings(state_dir=state))


def _one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    return lines[0]


def _waiting_loop(state: Path, out: Path, **step) -> str:
    eng = engine(state)
    g = goal([{"action": "restart the backup daemon", "tool": "shell", "args": {"cmd": f"echo restarted >> {out}"},
               **step}])
    s = eng.run(eng.create(g).loop_id)
    assert s.status == "waiting_human"
    eng.memory.close()
    return s.loop_id


# -- the CLI on agents' requests -------------------------------------------------------
def test_list_show_approve_reject_respond_through_the_cli(state):
    with _ars(state) as a:
        push = a.request_approval("mcp:cursor", "force-push main", "git push --force origin main", risk="high",
                                  meta={"cwd": "/srv/app"})
        drop = a.request_approval("claude-code:s1", "drop the users table", "psql -c 'DROP TABLE users'")
        ask = a.request_approval("mcp:cursor", "which database should the tests use?", kind="question")

    r = ars("inbox", "list", "--json", state=state)
    assert r.returncode == 0, r.stderr
    listed = json.loads(r.stdout)
    assert [x["id"] for x in listed] == [ask.id, drop.id, push.id]  # newest first
    for x in listed:
        assert {"id", "source", "kind", "summary", "status", "created_at"} <= set(x)
        assert x["status"] == "pending"
    assert {x["source"] for x in listed} == {"mcp:cursor", "claude-code:s1"}

    r = ars("inbox", "list", state=state)
    assert r.returncode == 0 and push.id in r.stdout and "force-push main" in r.stdout, r.stderr

    r = ars("inbox", "show", push.id, state=state)
    assert r.returncode == 0, r.stderr
    assert "git push --force origin main" in r.stdout and "high" in r.stdout
    shown = json.loads(ars("inbox", "show", push.id, "--json", state=state).stdout)
    assert shown["detail"] == "git push --force origin main" and shown["meta"] == {"cwd": "/srv/app"}

    r = ars("inbox", "approve", push.id, "--note", "release day", state=state)
    assert r.returncode == 0, r.stderr
    r = ars("inbox", "reject", drop.id, "--reason", "never in production", state=state)
    assert r.returncode == 0, r.stderr
    r = ars("inbox", "respond", ask.id, "the sqlite fixture", state=state)
    assert r.returncode == 0, r.stderr

    by_id = {x["id"]: x for x in json.loads(ars("inbox", "list", "--json", state=state).stdout)}
    assert by_id[push.id]["status"] == "approved" and by_id[push.id]["decision"]["note"] == "release day"
    assert by_id[drop.id]["status"] == "rejected" and by_id[drop.id]["decision"]["note"] == "never in production"
    assert by_id[ask.id]["status"] == "answered" and by_id[ask.id]["decision"]["note"] == "the sqlite fixture"
    assert by_id[push.id]["decision"]["decided_by"]  # user@host:pid
    pending = json.loads(ars("inbox", "list", "--status", "pending", "--json", state=state).stdout)
    assert pending == []

    # one ledger event per request and per decision, with stable ids
    reqs = list(Ledger(state).read(types=("inbox.request",)))
    decs = list(Ledger(state).read(types=("inbox.decision",)))
    assert sorted(e.data["id"] for e in reqs) == sorted([push.id, drop.id, ask.id])
    assert sorted(e.data["request_id"] for e in decs) == sorted([push.id, drop.id, ask.id])
    assert len({e.event_id for e in reqs + decs}) == 6


def test_a_second_decision_exits_1_naming_who_decided_what_and_when(state):
    with _ars(state) as a:
        req = a.request_approval("mcp:cursor", "rm -rf build/", "rm -rf build/")
    assert ars("inbox", "reject", req.id, "--reason", "keep the cache", state=state).returncode == 0
    r = ars("inbox", "approve", req.id, state=state)
    assert r.returncode == 1
    line = _one_line(r.stderr)
    assert f"request {req.id} was already rejected at" in line and "UTC by " in line
    assert "(keep the cache)" in line and "a second decision is refused" in line


def test_bad_input_exits_2_with_one_line(state):
    with _ars(state) as a:
        req = a.request_approval("mcp:cursor", "deploy", "make deploy")
        ask = a.request_approval("mcp:cursor", "which region?", kind="question")
    cases = [
        (("inbox", "reject", req.id), "needs a reason"),
        (("inbox", "respond", req.id, "yes"), "cannot respond"),
        (("inbox", "approve", ask.id), "cannot approve"),
        (("inbox", "respond", ask.id, "  "), "needs text"),
        (("inbox", "show", "req-000000000000"), "no inbox request"),
        (("inbox", "approve", "../../etc/passwd"), "no inbox request"),
        (("inbox", "approve", "loop:nope:req-1"), "no loop 'nope'"),
        (("inbox", "approve", "loop:broken"), "loop:<loop_id>:<request_id>"),
        (("inbox", "list", "--status", "maybe"), "unknown status"),
    ]
    for args, words in cases:
        r = ars(*args, state=state)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert words in _one_line(r.stderr), (args, r.stderr)
    # nothing was decided by any of them
    assert all(x.status == "pending" for x in _ars(state).inbox_list())


def test_bad_input_in_the_api(state):
    inbox = Inbox(state)
    with pytest.raises(BadQuery, match="unknown request kind"):
        inbox.create(source="mcp:x", kind="wish", summary="s")
    with pytest.raises(BadQuery, match="unknown risk"):
        inbox.create(source="mcp:x", kind="approval", summary="s", risk="extreme")
    with pytest.raises(BadQuery, match="needs a summary"):
        inbox.create(source="mcp:x", kind="approval", summary="  ")
    with pytest.raises(BadQuery, match="over the 4,000 limit"):
        inbox.create(source="mcp:x", kind="approval", summary="x" * 4_001)
    with pytest.raises(BadQuery, match="detail is .* over the"):
        inbox.create(source="mcp:x", kind="approval", summary="s", detail="y" * 100_000)
    with pytest.raises(BadQuery, match="meta must be a JSON object"):
        inbox.create(source="mcp:x", kind="approval", summary="s", meta={"x": object()})
    req = inbox.create(source="mcp:x", kind="approval", summary="ok")
    with pytest.raises(BadQuery, match="unknown verdict"):
        inbox.decide(req.id, "maybe")
    with pytest.raises(BadQuery, match="needs a reason"):
        inbox.decide(req.id, "reject", "")
    with pytest.raises(UnknownRequest):
        inbox.get("req-ffffffffffff")
    with pytest.raises(UnknownRequest):
        inbox.decide("req-../../x", "approve")
    for exc in (UnknownRequest, AlreadyDecided):
        assert issubclass(exc, BadInput)  # one line; the CLI maps AlreadyDecided to exit 1
    assert inbox.get(req.id).status == "pending"
    assert list(Ledger(state).read(types=("inbox.decision",))) == []



def test_a_chosen_request_id_must_be_fresh(state):
    """A hook names its request in its marker before creating it (core/inbox/store.new_request_id):
    the id it passes is taken only when well formed and unused by any request or decision."""
    inbox = Inbox(state)
    rid = new_request_id()
    assert inbox.create(source="mcp:x", kind="approval", summary="s", request_id=rid).id == rid
    inbox.decision_path("req-aaaaaaaaaaaa").write_text("{}")  # a decision whose request is gone
    for bad in (rid, "req-aaaaaaaaaaaa", "loop:l:r", "req-../../x", "req-XYZ"):
        with pytest.raises(BadQuery, match="malformed or taken"):
            inbox.create(source="mcp:x", kind="approval", summary="s", request_id=bad)
    assert [r.id for r in inbox.list("pending")] == [rid]

# -- exactly once across processes ------------------------------------------------------
def test_two_cli_processes_deciding_at_once_one_wins_the_other_names_the_winner(state):
    with _ars(state) as a:
        req = a.request_approval("claude-code:s9", "kubectl delete ns staging", "kubectl delete ns staging")
    env = env_without_ars()
    cmds = [["inbox", "approve", req.id, "--note", "approver A"],
            ["inbox", "reject", req.id, "--reason", "rejecter B"]]
    procs = [subprocess.Popen([sys.executable, "-m", "tui.cli.main", *c, "--state", str(state)], cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for c in cmds]
    results = [(p.wait(120), p.stdout.read(), p.stderr.read()) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    assert sorted(r[0] for r in results) == [0, 1], results
    final = _ars(state).inbox_get(req.id)
    loser = next(r for r in results if r[0] == 1)
    line = _one_line(loser[2])
    assert f"was already {final.status}" in line and final.decision.decided_by in line
    assert final.decision.note in line
    assert len(list(Ledger(state).read(types=("inbox.decision",)))) == 1
    assert sorted(p.name for p in (state / "inbox").iterdir()) == [f"{req.id}.decision.json", f"{req.id}.json"]


RACE = textwrap.dedent("""
    import sys
    from pathlib import Path
    from core.inbox import AlreadyDecided, Inbox
    state, rid, gate, who = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), sys.argv[4]
    inbox = Inbox(state)
    (gate / f"ready-{who}").touch()
    while not (gate / "go").exists():  # every racer has imported; all start together
        pass
    try:
        inbox.decide(rid, "approve" if int(who) % 2 else "reject", note=f"racer {who}", by=f"racer-{who}")
        print("WON")
    except AlreadyDecided as exc:
        print("REFUSED", exc)
""")


def test_racing_processes_exactly_one_decision(state, tmp_path):
    req = Inbox(state).create(source="mcp:x", kind="approval", summary="race me")
    gate = tmp_path / "gate"
    gate.mkdir()
    env = {**env_without_ars(), "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", RACE, str(state), req.id, str(gate), str(i)], cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(6)]
    deadline = time.monotonic() + 60
    while len(list(gate.glob("ready-*"))) < 6 and time.monotonic() < deadline:
        time.sleep(0.01)
    (gate / "go").touch()
    outs = [p.communicate(timeout=60) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    lines = [o.strip() for o, _ in outs]
    assert sum(x == "WON" for x in lines) == 1, lines
    winner = Inbox(state).get(req.id).decision
    refused = [x for x in lines if x.startswith("REFUSED")]
    assert len(refused) == 5 and all(f"by {winner.decided_by}" in x for x in refused), lines
    [event] = list(Ledger(state).read(types=("inbox.decision",)))
    assert event.data["decided_by"] == winner.decided_by and event.data["note"] == winner.note


# -- waiting -----------------------------------------------------------------------------
def test_wait_returns_once_another_process_decides(state):
    inbox = Inbox(state)
    req = inbox.create(source="mcp:x", kind="approval", summary="wait for me")
    got: list = []
    waiter = threading.Thread(target=lambda: got.append(inbox.wait(req.id, timeout=300)))
    waiter.start()
    r = ars("inbox", "approve", req.id, "--note", "from another process", state=state)
    assert r.returncode == 0, r.stderr
    waiter.join(300)
    assert not waiter.is_alive()
    [decided] = got
    assert decided.status == "approved" and decided.decision.note == "from another process"
    assert str(os.getpid()) not in decided.decision.decided_by.rsplit(":", 1)[1]  # decided elsewhere


def test_wait_times_out_still_pending(state):
    inbox = Inbox(state)
    req = inbox.create(source="mcp:x", kind="question", summary="anyone?")
    assert inbox.wait(req.id, timeout=0.1, poll=0.02).status == "pending"
    assert inbox.wait(req.id, timeout=0).status == "pending"
    inbox.decide(req.id, "respond", "yes")
    assert inbox.wait(req.id, timeout=0).status == "answered"


# -- files -------------------------------------------------------------------------------
def test_files_are_private(state):
    old = os.umask(0o022)  # whatever the umask
    try:
        with _ars(state) as a:
            req = a.request_approval("mcp:x", "private?", "cat ~/.ssh/id_rsa")
            a.inbox_decide(req.id, "reject", "no")
    finally:
        os.umask(old)
    d = state / "inbox"
    assert stat.S_IMODE(d.stat().st_mode) == 0o700
    for p in d.iterdir():
        assert stat.S_IMODE(p.stat().st_mode) == 0o600, p
    assert not [p for p in d.iterdir() if p.name.endswith(".tmp")]
    assert json.loads((d / f"{req.id}.json").read_text())["detail"] == "cat ~/.ssh/id_rsa"


# -- a loop's request is the same record through `ars inbox` and `ars loop` ---------------
def test_a_loop_request_approved_through_the_inbox_resumes_the_loop(state, tmp_path):
    out = tmp_path / "ran.txt"
    loop_id = _waiting_loop(state, out)
    with _ars(state) as a:
        a.request_approval("mcp:x", "an agent's request", "echo hi")
    listed = json.loads(ars("inbox", "list", "--json", state=state).stdout)
    [lr] = [x for x in listed if x["source"] == "loop"]
    assert lr["id"].startswith(f"loop:{loop_id}:") and lr["kind"] == "approval" and lr["status"] == "pending"
    assert lr["detail"] == f"echo restarted >> {out}"  # exactly what will run
    assert {x["source"] for x in listed} == {"loop", "mcp:x"}

    r = ars("inbox", "approve", lr["id"], "--note", "go ahead", state=state)
    assert r.returncode == 0, r.stderr
    assert out.read_text() == "restarted\n"  # the loop resumed and ran the action
    assert json.loads(ars("loop", "show", loop_id, "--json", state=state).stdout)["status"] == "done"

    r = ars("loop", "approve", loop_id, state=state)  # the same record: refused
    assert r.returncode == 2
    assert "already approved" in _one_line(r.stderr) and "go ahead" in r.stderr
    r = ars("inbox", "reject", lr["id"], "--reason", "too late", state=state)
    assert r.returncode == 1
    assert "already approved" in _one_line(r.stderr) and "a second decision is refused" in r.stderr
    assert out.read_text() == "restarted\n"
    assert len(list(Ledger(state).read(types=("human.decision",)))) == 1
    shown = json.loads(ars("inbox", "show", lr["id"], "--json", state=state).stdout)
    assert shown["status"] == "approved" and shown["decision"]["note"] == "go ahead"
    assert [x["source"] for x in json.loads(ars("inbox", "list", "--json", state=state).stdout)] == ["mcp:x"]


def test_a_loop_request_decided_through_ars_loop_is_refused_by_the_inbox(state, tmp_path):
    out = tmp_path / "ran.txt"
    loop_id = _waiting_loop(state, out)
    [lr] = _ars(state).inbox_list()
    r = ars("loop", "reject", loop_id, "--reason", "not tonight", state=state)
    assert r.returncode in (0, 1), r.stderr  # the loop follows its policy
    r = ars("inbox", "approve", lr.id, state=state)
    assert r.returncode == 1
    line = _one_line(r.stderr)
    assert "already rejected" in line and "not tonight" in line
    assert not out.exists()


def test_a_loop_question_is_answered_through_the_inbox(state, tmp_path):
    out = tmp_path / "ran.txt"
    loop_id = _waiting_loop(state, out, question="Which NAS share?")
    [lr] = _ars(state).inbox_list()
    assert lr.kind == "question" and "Which NAS share?" in lr.summary
    r = ars("inbox", "approve", lr.id, state=state)
    assert r.returncode == 2 and "cannot approve" in _one_line(r.stderr)
    r = ars("inbox", "respond", lr.id, "the backups share", state=state)
    assert r.returncode == 0, r.stderr
    s = json.loads(ars("loop", "show", loop_id, "--json", state=state).stdout)
    assert any(d["note"] == "the backups share" for d in s["decisions"])


# -- remember ----------------------------------------------------------------------------
def test_remember_goes_through_the_ledger_and_is_recalled(state):
    with _ars(state) as a:
        eid = a.remember("The NAS backup runs rsync over ssh on port 2222", summary="NAS backup port",
                         topics=["nas", "backup"], session_id="s-42")
        assert eid.startswith("manual:")
        assert a.remember("The NAS backup runs rsync over ssh on port 2222", session_id="s-42") == eid  # stable
        assert eid in [h.episode_id for h in a.recall("rsync port 2222").hits]
        with pytest.raises(BadInput, match="over the 100,000 limit"):
            a.remember("x" * 100_001)
        with pytest.raises(BadInput, match="nothing to remember"):
            a.remember("   ")
    eps = [e for e in Ledger(state).read(types=("episode.upsert",)) if e.data["id"] == eid]
    assert eps and eps[0].data["session_id"] == "s-42" and eps[0].data["source"] == "manual"


# -- the dashboard's Inbox -----------------------------------------------------------------
async def test_dashboard_lists_agents_beside_loops_and_decides_through_the_inbox(state, tmp_path):
    from tuihelp import loaded, make_app, select_row, wait_for

    loop_id = _waiting_loop(state, tmp_path / "ran.txt")
    with _ars(state) as a:
        push = a.request_approval("claude-code:s1", "force-push main", "git push --force origin main", risk="high",
                                  meta={"cwd": "/srv/app"})
        other = a.request_approval("mcp:cursor", "delete the staging namespace", "kubectl delete ns staging")
    app = make_app(state, watch=True)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        await pilot.press("2")
        screen = app.screen
        await wait_for(pilot, lambda: {push.id, other.id} <= set(screen.cells), what="the agents' rows")
        assert loop_id in screen.cells
        table = screen.query_one("#inbox-table")
        assert str(table.get_cell(push.id, "source")) == "claude:s1"  # the agent and its session, abbreviated (the pane says it whole)
        assert str(table.get_cell(loop_id, "source")).startswith("↻ ")  # ↻ <goal id>: a loop asks

        select_row(table, push.id)
        body = screen.query_one("#request-body")
        await wait_for(pilot, lambda: "git push --force origin main" in str(body.render()), what="the request pane")
        await pilot.press("a")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "ConfirmModal", what="the confirm modal")
        assert not (state / "inbox" / f"{push.id}.decision.json").exists()  # nothing written before y
        await pilot.press("y")
        await wait_for(pilot, lambda: push.id not in screen.cells, what="the decided row to go")
        assert _ars(state).inbox_get(push.id).status == "approved"

        # decided elsewhere (the CLI, another process): the row goes on the next poll
        assert ars("inbox", "reject", other.id, "--reason", "not today", state=state).returncode == 0
        await wait_for(pilot, lambda: other.id not in screen.cells, what="the row decided elsewhere to go")
        assert loop_id in screen.cells  # the loop's request is untouched


async def test_dashboard_refuses_a_request_another_process_decided_first(state):
    from tuihelp import loaded, make_app, select_row, wait_for

    with _ars(state) as a:
        req = a.request_approval("mcp:cursor", "drop the cache", "redis-cli FLUSHALL")
    app = make_app(state, watch=False)  # no polling: the row is still shown when the other process decides
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        await pilot.press("2")
        screen = app.screen
        await wait_for(pilot, lambda: req.id in screen.cells, what="the agent's row")
        select_row(screen.query_one("#inbox-table"), req.id)
        assert ars("inbox", "reject", req.id, "--reason", "cli first", state=state).returncode == 0
        await pilot.press("a")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "ConfirmModal", what="the confirm modal")
        await pilot.press("y")
        await wait_for(pilot, lambda: req.id not in screen.cells, what="the row to go")
        said = [n.message for n in app.events]  # whole (the corner shows one short line)
        assert any("already rejected" in m and "cli first" in m for m in said), said
    final = _ars(state).inbox_get(req.id)
    assert final.status == "rejected" and final.decision.note == "cli first"
    assert len(list(Ledger(state).read(types=("inbox.decision",)))) == 1


def test_two_processes_approving_one_loop_request_through_the_inbox_at_once(state, tmp_path):
    out = tmp_path / "ran.txt"
    _waiting_loop(state, out)
    [lr] = _ars(state).inbox_list()
    env = env_without_ars()
    procs = [subprocess.Popen([sys.executable, "-m", "tui.cli.main", "inbox", "approve", lr.id, "--note", f"approver {i}",
                               "--state", str(state)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for i in range(2)]
    results = [(p.wait(120), p.stdout.read(), p.stderr.read()) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    assert sorted(r[0] for r in results) == [0, 1], results
    winner = _ars(state).inbox_get(lr.id).decision
    line = _one_line(next(r for r in results if r[0] == 1)[2])
    assert "already approved" in line and winner.decided_by in line and winner.note in line
    assert out.read_text() == "restarted\n"  # the action ran once
    assert len(list(Ledger(state).read(types=("human.decision",)))) == 1


def test_importing_the_inbox_package_loads_only_the_stdlib():
    code = "import sys, core.inbox; print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'typer', 'textual', 'rich')))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "[]", (r.stdout, r.stderr)
