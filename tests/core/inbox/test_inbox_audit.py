"""``ars inbox list --all``: every request ever made, with who decided, when, the
note and the outcome, agents' and loops' alike (the supervisor's audit)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.api import ARS
from core.config import Settings
from loophelp import ars, engine, goal


@pytest.fixture
def state(tmp_path) -> Path:
    s = tmp_path / "state"
    s.mkdir()
    return s


def _waiting_loop(state: Path, out: Path) -> str:
    eng = engine(state)
    g = goal([{"action": "restart the backup daemon", "tool": "shell", "args": {"cmd": f"echo restarted >> {out}"}}])
    s = eng.run(eng.create(g).loop_id)
    assert s.status == "waiting_human"
    eng.memory.close()
    return s.loop_id


def test_the_audit_keeps_every_request_and_its_outcome(state, tmp_path):
    loop_id = _waiting_loop(state, tmp_path / "ran.txt")
    with ARS(Settings(state_dir=state)) as a:
        push = a.request_approval("mcp:cursor", "force-push main", "git push --force origin main", risk="high")
        gone = a.request_approval("claude-code:s1", "rm -rf build", "rm -rf build", expires_in=60)
        left = a.request_approval("claude-code:s1", "curl | sh", "curl x | sh")
        a.inbox_end(gone.id, "expire", "the hook waited 50 s and gave up")
        a.inbox_end(left.id, "withdraw", "decided in the terminal: the call ran")
    [lr] = [x for x in json.loads(ars("inbox", "list", "--json", state=state).stdout) if x["source"] == "loop"]
    assert ars("inbox", "reject", push.id, "--reason", "not on main", state=state).returncode == 0
    assert ars("inbox", "approve", lr["id"], "--note", "go ahead", state=state).returncode == 0

    plain = json.loads(ars("inbox", "list", "--json", state=state).stdout)
    assert lr["id"] not in {x["id"] for x in plain}, "the plain list shows a loop's request only while it is open"
    every = {x["id"]: x for x in json.loads(ars("inbox", "list", "--all", "--json", state=state).stdout)}
    assert set(every) == {push.id, gone.id, left.id, lr["id"]}
    assert [every[i]["outcome"] for i in (push.id, gone.id, left.id, lr["id"])] == \
        ["denied", "expired", "withdrawn", "allowed"]
    assert every[push.id]["decision"]["note"] == "not on main" and every[push.id]["decision"]["decided_by"]
    loop_req = every[lr["id"]]
    assert loop_req["decision"]["note"] == "go ahead"
    assert loop_req["detail"] == lr["detail"], "the loop's decided request shows what it asked to run"
    assert loop_req["meta"]["loop_id"] == loop_id

    text = ars("inbox", "list", "--all", state=state).stdout
    assert "denied" in text and "not on main" in text and "allowed" in text and "go ahead" in text

    only = json.loads(ars("inbox", "list", "--all", "--status", "expired", "--json", state=state).stdout)
    assert [x["id"] for x in only] == [gone.id]
    assert json.loads(ars("inbox", "list", "--all", "--since", "2999-01-01", "--json", state=state).stdout) == []
    assert len(json.loads(ars("inbox", "list", "--all", "--since", "1h", "--json", state=state).stdout)) == 4


def test_a_bad_since_is_one_line_and_exit_2(state):
    r = ars("inbox", "list", "--all", "--since", "last tuesday", state=state)
    assert r.returncode == 2
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "--since" in lines[0] and "7d" in lines[0], r.stderr
