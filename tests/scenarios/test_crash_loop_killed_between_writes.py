"""Real processes, real SIGKILL.

* The engine is killed between any two of its writes (history, ledger,
  checkpoint, the record's ledger event, the memory upsert, a tool run) and
  `ars loop resume` finishes the loop: the history, the ledger and memory end
  exactly as after an uninterrupted run, nothing lost and nothing twice.
* A run killed at an arbitrary moment shows up in `ars rehydrate` as an open
  loop to resume, and resumes to done.
* Two processes approving the same request at the same moment: exactly one
  wins, the other is refused with a clear message, the action runs once.
"""

from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from core.config import Settings
from core.ledger.ledger import Ledger
from core.loop.checkpoints import CheckpointStore
from core.memory.memory import Memory

from loophelp import GOALS, ROOT, ars, ars_json, engine, goal
from conftest import env_without_ars

CRASH_GOAL = {
    "goal_id": "nas-backup",
    "goal": "Repair the nightly NAS backup after the host key change",
    "budget": {"max_iterations": 5, "max_consecutive_failures": 3},
    "script": [
        {"action": "read the failing job's log", "outcome": "pass", "done": False},
        {"action": "write down the fix", "tool": "note",
         "args": {"text": "NAS backup fix: re-pin the NAS host key in known_hosts, then rerun rsync."}},
        {"action": "rerun the backup", "outcome": "pass"},
    ],
}


def shape(entries) -> list[tuple]:
    return [(e.index, e.kind, e.from_status, e.to_status, e.from_step, e.to_step, e.iteration) for e in entries]


def check_exactly_once(state: Path, loop_id: str) -> list:
    store = CheckpointStore(state)
    entries, problems = store.history(loop_id)
    assert all("torn" in p.error for p in problems), problems
    led = list(Ledger(state).read())
    ids = [e.event_id for e in led]
    dupes = [i for i, n in collections.Counter(ids).items() if n > 1]
    assert dupes == [], f"events written twice: {dupes}"
    mine = [e for e in led if e.data.get("loop_id") == loop_id]
    seqs = sorted(e.data["seq"] for e in mine if e.type == "loop.transition")
    assert seqs == [e.index for e in entries] == list(range(1, len(entries) + 1))
    records = sorted(e.data["iteration"] for e in mine if e.type == "loop.record")
    assert records == [1, 2, 3]
    episodes = [e.data["id"] for e in led if e.type == "episode.upsert" and e.data["id"].startswith(f"loop:{loop_id}")]
    assert sorted(episodes) == sorted(set(episodes))
    assert sorted(i for i in episodes if i.count(":") == 2) == [f"loop:{loop_id}:{n}" for n in (1, 2, 3)]
    assert len([i for i in episodes if ":note:" in i]) == 1
    mem = Memory(Settings(state_dir=state))
    try:
        assert sorted(i for i in mem.sqlite.ids() if i.startswith(f"loop:{loop_id}")) == sorted(episodes)
    finally:
        mem.close()
    return entries


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The history of the same goal run without interruption."""
    state = tmp_path_factory.mktemp("reference") / "state"
    state.mkdir()
    eng = engine(state)
    s = eng.run(eng.create(goal(CRASH_GOAL["script"], text=CRASH_GOAL["goal"], goal_id="nas-backup",
                                budget=CRASH_GOAL["budget"])).loop_id)
    assert s.status == "done"
    return shape(eng.store.history(s.loop_id)[0])


@pytest.mark.parametrize("point", [
    *(f"after_history.{step}@2" for step in ("observe", "orient", "decide", "act", "verify", "record")),
    "after_ledger.act@2", "after_ledger.record@2",
    "tool.act@2", "record_ledger.record@2", "record_memory.record@2",
])
def test_sigkill_between_writes_resumes_with_nothing_lost_or_doubled(tmp_path, reference, point):
    state = tmp_path / "state"
    gf = tmp_path / "goal.json"
    gf.write_text(json.dumps(CRASH_GOAL), encoding="utf-8")
    r = ars("loop", "run", "--goal-file", str(gf), state=state, env={"ARS_LOOP_CRASH_AT": point})
    assert r.returncode == -signal.SIGKILL, (r.returncode, r.stdout, r.stderr)
    [killed] = CheckpointStore(state).list().states  # rolled forward to the history when it is ahead
    assert killed.status == "active" and killed.iteration == (3 if point.endswith("record@2") and point.startswith("after_") else 2)
    eng = engine(state)
    try:
        done = eng.run(killed.loop_id)  # what `ars loop resume` does (the CLI is tested below)
    finally:
        eng.memory.close()
    assert done.status == "done", done
    entries = check_exactly_once(state, killed.loop_id)
    assert shape(entries) == reference


def _history_lines(state: Path) -> int:
    files = list((state / "checkpoints").glob("*.history.jsonl")) if (state / "checkpoints").exists() else []
    return sum(1 for _ in open(files[0], "rb")) if files else 0


def test_sigkill_mid_run_then_rehydrate_and_resume(tmp_path):
    state = tmp_path / "state"
    canary = json.loads((GOALS / "watch-canary.json").read_text(encoding="utf-8"))
    for step in canary["script"]:
        if step.get("tool") == "wait":
            step["args"]["seconds"] = 0.4
    gf = tmp_path / "canary.json"
    gf.write_text(json.dumps(canary), encoding="utf-8")
    env = env_without_ars()
    proc = subprocess.Popen([sys.executable, "-m", "tui.cli.main", "loop", "run", "--goal-file", str(gf),
                             "--state", str(state)],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while _history_lines(state) < 11 and time.monotonic() < deadline:  # inside iteration 2
            assert proc.poll() is None, proc.stderr.read()
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(10) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    r = ars("rehydrate", "--format", "json", state=state)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    [brief] = report["loops"]
    assert brief["status"] == "active" and brief["goal_id"] == "canary-2024.11"
    assert brief["command"] == f"ars loop resume {brief['loop_id']}" and not brief["running"]
    assert "resume at" in brief["next_step"] and "canary-2024.11" in report["focus"]
    assert (state / "startup-context.md").read_text(encoding="utf-8").startswith("# Startup Recovery Context")
    s = ars_json("loop", "resume", brief["loop_id"], state=state)
    assert s["status"] == "done" and [r["iteration"] for r in s["iterations"]] == [1, 2, 3, 4, 5]
    entries, _ = CheckpointStore(state).history(brief["loop_id"])
    assert [e.index for e in entries] == list(range(1, len(entries) + 1))
    led = [e for e in Ledger(state).read() if e.data.get("loop_id") == brief["loop_id"]]
    assert sorted(e.data["iteration"] for e in led if e.type == "loop.record") == [1, 2, 3, 4, 5]
    assert len({e.event_id for e in led}) == len(led)


# -- two approvals at once ---------------------------------------------------------------------
def _waiting_loop(state: Path, out: Path) -> str:
    eng = engine(state)
    g = goal([{"action": "restart the backup daemon", "tool": "shell", "args": {"cmd": f"echo restarted >> {out}"}}])
    s = eng.run(eng.create(g).loop_id)
    assert s.status == "waiting_human"
    eng.memory.close()
    return s.loop_id


def test_two_processes_approving_at_once_exactly_one_wins_cli(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    out = tmp_path / "ran.txt"
    loop_id = _waiting_loop(state, out)
    env = env_without_ars()
    procs = [subprocess.Popen([sys.executable, "-m", "tui.cli.main", "loop", "approve", loop_id, "--note", f"approver {i}",
                               "--state", str(state)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for i in range(2)]
    results = [(p.wait(120), p.stdout.read(), p.stderr.read()) for p in procs]
    codes = sorted(r[0] for r in results)
    assert codes == [0, 2], results
    loser = next(r for r in results if r[0] == 2)
    assert len(loser[2].strip().splitlines()) == 1
    assert "already approved" in loser[2] and "a second decision is refused" in loser[2] \
        or "not waiting for a decision" in loser[2], loser[2]
    assert out.read_text() == "restarted\n"  # the action ran once
    decisions = [e for e in Ledger(state).read(types=("human.decision",))]
    assert len(decisions) == 1
    assert len(list((state / "approvals").glob("*.json"))) == 1


BARRIER = """
    (Path(sys.argv[3]) / f"ready-{who}").touch()
    while not (Path(sys.argv[3]) / "go").exists():  # every racer has imported; all start together
        pass
"""
RACE = textwrap.dedent("""
    import sys
    from pathlib import Path
    from core.loop.decisions import decide, AlreadyDecided
    state, loop_id, who = Path(sys.argv[1]), sys.argv[2], sys.argv[4]
""") + textwrap.dedent(BARRIER) + textwrap.dedent("""
    try:
        decide(state, loop_id, "approve" if int(who) % 2 else "reject", note=f"racer {who}")
        print("WON")
    except AlreadyDecided as exc:
        print("REFUSED", exc)
""")


def race(script: str, racers: int, state: Path, loop_id: str, gate: Path) -> list[str]:
    gate.mkdir()
    env = {**env_without_ars(), "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", script, str(state), loop_id, str(gate), str(i)], cwd=ROOT,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(racers)]
    deadline = time.monotonic() + 60
    while len(list(gate.glob("ready-*"))) < racers and time.monotonic() < deadline:
        time.sleep(0.01)
    (gate / "go").touch()
    outs = [p.communicate(timeout=60) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    return [o.strip() for o, _ in outs]


@pytest.mark.parametrize("racers", [2, 6])
def test_concurrent_decisions_on_one_request_exactly_one_wins(tmp_path, racers):
    state = tmp_path / "state"
    state.mkdir()
    loop_id = _waiting_loop(state, tmp_path / "ran.txt")
    outs = race(RACE, racers, state, loop_id, tmp_path / "gate")
    won = [o for o in outs if o.startswith("WON")]
    refused = [o for o in outs if o.startswith("REFUSED")]
    assert len(won) == 1 and len(refused) == racers - 1, outs
    assert all("a second decision is refused" in o for o in refused)
    [event] = list(Ledger(state).read(types=("human.decision",)))
    winner = json.loads((next((state / "approvals").glob("*.json"))).read_text())
    assert event.data["note"] == winner["note"] and event.data["kind"] == winner["kind"]


CLAIM_RACE = textwrap.dedent("""
    import sys
    from pathlib import Path
    from core.loop.decisions import claim, AlreadyDecided
    from core.loop.models import Decision
    state, loop_id, who = Path(sys.argv[1]), sys.argv[2], sys.argv[4]
    d = Decision(loop_id=loop_id, request_id="req-7", kind="approve", note=f"racer {who}", decided_by=who)
""") + textwrap.dedent(BARRIER) + textwrap.dedent("""
    try:
        claim(state, d)  # no pre-check here: the exclusive create alone decides
        print("WON")
    except AlreadyDecided:
        print("REFUSED")
""")


def test_the_exclusive_create_alone_lets_exactly_one_claim_win(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    for round_ in range(2):
        outs = race(CLAIM_RACE, 8, state, f"loop-r{round_}", tmp_path / f"gate{round_}")
        assert sorted(outs) == ["REFUSED"] * 7 + ["WON"], outs
