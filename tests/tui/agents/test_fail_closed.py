"""A hook fails closed before its agent's timeout, whatever the agent does to ARS's files
(DESIGN.md, "Trust model"; the attacks of the issue "Supervision that holds against a patient
agent"). Each test is the attack as the supervised agent runs it: the same user, the real hook
process, the real state directory. Timeouts only guard against a hang; no timing is asserted."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.inbox import Inbox, signing
from test_hooks import PASS, _env, bash, finish, hook_bg
from tui.agents.hermes import WATCHDOG_MARGIN

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = Path(sys.executable).parent / "ars"


@pytest.fixture
def project(tmp_path) -> Path:
    p = tmp_path / "proj"
    p.mkdir()
    return p


@pytest.fixture
def state(tmp_path) -> Path:
    d = tmp_path / "state"
    signing.init(d, PASS.encode())
    return d


def _first_request_id(state: Path, proc: subprocess.Popen, within: float = 60) -> str:
    """The id of the request the hook makes, the moment its file appears (as a watching agent sees it)."""
    folder = state / "inbox"
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            names = [n for n in os.listdir(folder) if n.startswith("req-") and n.count(".") == 1]
        except FileNotFoundError:
            names = []
        if names:
            return names[0][: -len(".json")]
        assert proc.poll() is None, finish(proc)
        time.sleep(0.005)
    raise AssertionError("no request appeared")


def _decision(r: subprocess.CompletedProcess) -> str:
    assert r.returncode == 0, r
    return json.loads(r.stdout)["hookSpecificOutput"]["permissionDecision"]


@pytest.mark.parametrize("plant", ["dangling-symlink", "fifo", "symlink-to-a-decision", "oversized"])
def test_a_planted_decision_name_is_refused_not_taken_as_decided(project, state, tmp_path, plant):
    proc = hook_bg(bash(project, "rm -rf /tmp/victim"), state)
    rid = _first_request_id(state, proc)
    name = state / "inbox" / f"{rid}.decision.json"
    if plant == "dangling-symlink":
        os.symlink(tmp_path / "nowhere", name)
    elif plant == "fifo":
        os.mkfifo(name)
    elif plant == "symlink-to-a-decision":  # even a real-looking decision behind a link is not one ARS wrote
        real = tmp_path / "d.json"
        real.write_text(json.dumps({"verdict": "approve", "decided_by": "agent", "decided_at": "2026-01-01T00:00:00Z"}))
        os.symlink(real, name)
    else:
        with open(name, "wb") as fh:
            fh.truncate(3 << 30)  # a 3 GB sparse file
    r = finish(proc, timeout=120)
    assert _decision(r) == "deny", r.stderr  # bypassPermissions: never a prompt, so never "ask" either
    reason = json.loads(r.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert rid in reason and "refused" in reason


def test_ars_inbox_list_skips_a_fifo_named_like_a_request(state):
    Inbox(state).dir.mkdir(parents=True, exist_ok=True)
    os.mkfifo(state / "inbox" / "req-0123456789ab.json")
    p = subprocess.run([sys.executable, "-m", "tui.cli.main", "inbox", "list", "--json", "--state", str(state)],
                       capture_output=True, text=True, timeout=60, env=_env(), cwd=ROOT, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == []


def _hold_lock(path: Path) -> subprocess.Popen:
    """`flock PATH sleep` as the agent would run it: the lock held by another process."""
    code = ("import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600); "
            "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(600)")
    p = subprocess.Popen([sys.executable, "-c", code, str(path)], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "held"
    return p


def test_the_ledger_lock_held_by_the_agent_gets_a_refusal_not_the_agents_timeout(project, state):
    locker = _hold_lock(state / ".ledger.lock")
    try:
        proc = hook_bg(bash(project, "rm -rf /tmp/victim"), state)
        r = finish(proc, timeout=120)
    finally:
        locker.kill()
        locker.wait()
    assert _decision(r) == "deny", r.stderr
    assert b"lock" in r.stderr  # one line says which lock held it
    assert Inbox(state).list() == []  # no request was made: nothing for anyone to approve later


def test_the_hermes_hook_blocks_when_the_ledger_lock_is_held(project, state):
    locker = _hold_lock(state / ".ledger.lock")
    pin = signing.public_fingerprint(state)
    ev = {"hook_event_name": "pre_tool_call", "tool_name": "terminal", "tool_input": {"command": "rm -rf /tmp/v"},
          "session_id": "s-lock", "cwd": str(project), "extra": {"tool_call_id": "call_1"}}
    cmd = [str(SCRIPT) if SCRIPT.exists() else sys.executable, *([] if SCRIPT.exists() else ["-m", "tui.cli.main"]),
           "hook", "hermes", "--state", str(state), "--supervisor", pin, "--timeout", "30"]
    try:
        r = subprocess.run(cmd, input=json.dumps(ev).encode(), capture_output=True, timeout=120, env=_env(), cwd=ROOT)
    finally:
        locker.kill()
        locker.wait()
    out = json.loads(r.stdout)
    assert out["action"] == "block" and "BLOCKED" in out["message"], r


WATCHED = r"""
import os, sys
sys.path.insert(0, {root!r})
from tui.agents import hook_io
hook_io.guard(float(sys.argv[1]), {{"answer": "closed"}}, lambda m: sys.stderr.write(m + "\n"))
os.mkfifo(sys.argv[2])
open(sys.argv[2]).read()  # blocks for ever: nobody opens the other end
hook_io.answer({{"answer": "late"}})
"""


def test_the_watchdog_answers_closed_when_the_hook_is_stuck_in_a_system_call(tmp_path):
    code = WATCHED.format(root=str(ROOT))
    r = subprocess.run([sys.executable, "-c", code, "2", str(tmp_path / "fifo")], capture_output=True, timeout=60)
    assert r.returncode == 0
    assert json.loads(r.stdout) == {"answer": "closed"}
    assert b"answered closed" in r.stderr


def test_the_watchdog_stays_quiet_after_the_hook_answered(tmp_path):
    code = ("import sys, time; sys.path.insert(0, %r)\n"
            "from tui.agents import hook_io\n"
            "hook_io.guard(1.0, {'answer': 'closed'}, lambda m: None)\n"
            "hook_io.answer({'answer': 'real'})\n"
            "time.sleep(30)  # stuck after answering: still ended by the watchdog, with one answer\n") % str(ROOT)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert r.returncode == 0
    assert r.stdout.decode().splitlines() == [json.dumps({"answer": "real"})]


def test_hermes_watchdog_fires_before_hermes_timeout():
    from tui.agents.hermes import MARGIN

    assert 0 < WATCHDOG_MARGIN < MARGIN  # the wait ends first; the watchdog only when the wait itself is stuck
