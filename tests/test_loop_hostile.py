"""The loop against hostile input and damaged files, through real processes
and files: a fork never replays an approval, a person's answer is never run
as shell syntax, unusable files and bad JSON are one line on stderr (never a
traceback), a corrupt decision file is reported and recoverable, loop ids
never collide through the ``__`` separator, skipped history lines are
counted, and the dashboard creates nothing in an empty directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loophelp import ars, ars_json


@pytest.fixture
def state(tmp_path):
    d = tmp_path / "state"
    d.mkdir()
    return d


def goal_file(tmp_path: Path, script: list[dict], name: str = "goal.json", **kw) -> Path:
    f = tmp_path / name
    f.write_text(json.dumps({"goal": "Roll the change out to staging", **kw, "script": script}), encoding="utf-8")
    return f


def one_line_error(r, code: int, *needles: str) -> str:
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert r.returncode == code, (r.returncode, r.stdout, r.stderr)
    assert len(lines) == 1, r.stderr
    assert "Traceback" not in r.stderr
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


# -- 1. a fork copies no approval ---------------------------------------------------------
def test_fork_after_an_approval_does_not_replay_the_risky_action(state, tmp_path):
    out = tmp_path / "ran.txt"
    g = goal_file(tmp_path, [{"action": "append a line", "tool": "shell", "args": {"cmd": f"echo ran >> '{out}'"}}])
    s = ars_json("loop", "run", "--goal-file", str(g), state=state)
    assert s["status"] == "waiting_human"
    done = ars_json("loop", "approve", s["loop_id"], "--note", "once", state=state)
    assert done["status"] == "done" and out.read_text() == "ran\n"
    history = ars_json("loop", "history", s["loop_id"], state=state)
    at = next(e["index"] for e in history if e["kind"] == "decision")
    assert history[at - 1]["state"]["approved"] is True  # the entry right after the approval
    forks = []
    for _ in range(3):
        f = ars_json("loop", "fork", s["loop_id"], "--at", str(at), "--run", state=state)
        forks.append(f)
        assert f["status"] == "waiting_human", f
        p = f["pending_approval"]
        assert p["kind"] == "approval" and p["action"]["tool"] == "shell"
        assert f["approved"] is False and f["decisions"] == []
    assert out.read_text() == "ran\n"  # no fork ran the parent's approved command
    # a fork is decided on its own: approving one runs the command once more, for that fork only
    f = ars_json("loop", "approve", forks[0]["loop_id"], state=state)
    assert f["status"] == "done" and out.read_text() == "ran\nran\n"
    assert ars_json("loop", "show", forks[1]["loop_id"], state=state)["status"] == "waiting_human"


def test_fork_of_a_waiting_loop_asks_again_under_a_new_request(state, tmp_path):
    out = tmp_path / "ran.txt"
    g = goal_file(tmp_path, [{"action": "append a line", "tool": "shell", "args": {"cmd": f"echo ran >> '{out}'"}}])
    s = ars_json("loop", "run", "--goal-file", str(g), state=state)
    at = s["seq"]
    f = ars_json("loop", "fork", s["loop_id"], "--at", str(at), "--run", state=state)
    assert f["status"] == "waiting_human" and f["pending_approval"]["request_id"] == "req-1"
    # deciding the parent decides nothing for the fork, and the other way round
    assert ars_json("loop", "approve", s["loop_id"], state=state)["status"] == "done"
    assert ars_json("loop", "resume", f["loop_id"], state=state)["status"] == "waiting_human"
    assert out.read_text() == "ran\n"


# -- 2. {answer} in a shell command -----------------------------------------------------------
def test_an_answer_is_quoted_into_the_shell_command(state, tmp_path):
    victim = tmp_path / "X"
    g = goal_file(tmp_path, [{"action": "greet", "tool": "shell", "args": {"cmd": "echo hello {answer}"},
                              "question": "Greet whom?"}])
    s = ars_json("loop", "run", "--goal-file", str(g), state=state)
    assert s["pending_approval"]["kind"] == "question"
    answer = f"world; touch {victim}"
    s = ars_json("loop", "respond", s["loop_id"], answer, state=state)
    # the approval shows the command exactly as it will run
    cmd = s["pending_approval"]["action"]["args"]["cmd"]
    assert cmd == f"echo hello 'world; touch {victim}'"
    r = ars("loop", "show", s["loop_id"], state=state, env={"COLUMNS": "300"})
    assert r.returncode == 0 and f"runs: {cmd}" in r.stdout
    done = ars_json("loop", "approve", s["loop_id"], state=state)
    assert done["status"] == "done"
    assert not victim.exists()
    assert done["iterations"][-1]["result"]["output"] == f"hello world; touch {victim}\n"


@pytest.mark.parametrize("template", ["echo 'hello {answer}'", 'echo "hello {answer}"', "echo hello{answer}"])
def test_an_answer_is_literal_text_in_any_quoting(state, tmp_path, template):
    victim = tmp_path / "X"
    answer = f"a'b\"c $(touch {victim}) `touch {victim}`; touch {victim}"
    g = goal_file(tmp_path, [{"action": "greet", "tool": "shell", "args": {"cmd": template},
                              "question": "Greet whom?"}])
    s = ars_json("loop", "run", "--goal-file", str(g), state=state)
    s = ars_json("loop", "respond", s["loop_id"], answer, state=state)
    done = ars_json("loop", "approve", s["loop_id"], state=state)
    assert not victim.exists()
    assert answer in done["iterations"][-1]["result"]["output"]


def test_an_answer_in_a_context_quoting_cannot_cover_is_refused(state, tmp_path):
    victim = tmp_path / "X"
    g = goal_file(tmp_path, [{"action": "greet", "tool": "shell", "args": {"cmd": "echo \"$(echo {answer})\""},
                              "question": "Greet whom?"}], budget={"max_iterations": 1})
    s = ars_json("loop", "run", "--goal-file", str(g), state=state)
    s = ars_json("loop", "respond", s["loop_id"], f"x; touch {victim}", state=state, expect=1)
    assert not victim.exists()
    assert s["status"] == "blocked" and s["pending_approval"]["kind"] == "unblock"
    assert "write it as a word of its own" in s["iterations"][-1]["verification"]["reason"]
