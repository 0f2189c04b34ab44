"""`ars loop ...` as a person runs it: JSON shapes (DESIGN.md), exit codes
(0 done or waiting, 1 blocked/aborted or a failure, 2 bad input with one line
on stderr), the approve-to-done flow."""

from __future__ import annotations

import json

import pytest

from loophelp import GOALS, ars, ars_json


@pytest.fixture
def state(tmp_path):
    d = tmp_path / "state"
    d.mkdir()
    return d


def one_line_error(r, code: int, needle: str) -> None:
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert r.returncode == code, (r.returncode, r.stdout, r.stderr)
    assert len(lines) == 1 and needle in lines[0], r.stderr


def test_run_approve_done_and_json_shapes(state):
    s = ars_json("loop", "run", "--goal-file", str(GOALS / "deploy-hotfix.json"), state=state)
    assert s["status"] == "waiting_human" and s["pending_approval"]["allowed"] == ["approve", "reject", "edit"]
    assert set(s) >= {"loop_id", "goal_id", "status", "iteration", "current_step", "blockers", "open_questions",
                      "pending_approval", "budget", "parent", "consecutive_failures"}
    listed = ars_json("loop", "list", state=state)
    assert [x["loop_id"] for x in listed] == [s["loop_id"]]
    assert ars_json("loop", "show", s["loop_id"], state=state)["seq"] == s["seq"]
    done = ars_json("loop", "approve", s["loop_id"], "--note", "window open", state=state)
    assert done["status"] == "done" and done["decisions"][0]["note"] == "window open"
    r = ars("loop", "show", s["loop_id"], state=state, env={"COLUMNS": "200"})
    assert r.returncode == 0 and "status done" in r.stdout and "approve: window open" in r.stdout


def test_table_output_tells_the_person_what_to_type(state):
    r = ars("loop", "run", "--goal-file", str(GOALS / "deploy-hotfix.json"), state=state, env={"COLUMNS": "200"})
    assert r.returncode == 0
    loop_id = r.stdout.split()[0]
    assert "waiting for a person" in r.stdout and f"ars loop approve {loop_id}" in r.stdout
    assert f"ars loop edit {loop_id} --args JSON" in r.stdout


def test_blocked_and_aborted_exit_1(state):
    r = ars("loop", "run", "--goal-file", str(GOALS / "flaky-ci.json"), "--json", state=state)
    assert r.returncode == 1 and json.loads(r.stdout)["status"] == "blocked"
    loop_id = json.loads(r.stdout)["loop_id"]
    r = ars("loop", "cancel", loop_id, "--reason", "runner replaced", "--json", state=state)
    assert r.returncode == 0 and json.loads(r.stdout)["exit_reason"] == "cancelled: runner replaced"


def test_goal_text_and_chinese_goal_file(state):
    s = ars_json("loop", "run", "--goal-file", str(GOALS / "产品调研.json"), state=state)
    assert s["status"] == "done" and s["goal_id"] == "产品调研"
    assert any(p.name.startswith("产品调研__") for p in (state / "checkpoints").iterdir())
    s = ars_json("loop", "run", "--goal", "整理上周的 Neo4j 故障复盘", state=state)
    assert s["status"] == "waiting_human" and s["pending_approval"]["kind"] == "question"


@pytest.mark.parametrize("args, code, needle", [
    (["loop", "show", "loop-nope"], 2, "no loop 'loop-nope'"),
    (["loop", "approve", "loop-nope"], 2, "no loop 'loop-nope'"),
    (["loop", "resume", "../../etc/passwd"], 2, "no loop '../../etc/passwd'"),
    (["loop", "history", "loop-nope"], 2, "no loop 'loop-nope'"),
    (["loop", "fork", "loop-nope", "--at", "1"], 2, "no loop 'loop-nope'"),
    (["loop", "run"], 2, "give exactly one of --goal TEXT or --goal-file FILE"),
    (["loop", "run", "--goal", "x", "--goal-file", "y.json"], 2, "give exactly one of"),
    (["loop", "run", "--goal", "x", "--policy", "magic"], 2, "unknown policy 'magic'"),
    (["loop", "run", "--goal", "   "], 2, "empty goal"),
    (["loop", "run", "--goal-file", "no/such/goal.json"], 2, "no such file"),
    (["check", ""], 2, "nothing to check"),
])
def test_bad_input_is_one_line_and_exit_2(state, args, code, needle):
    one_line_error(ars(*args, state=state if args[0] == "loop" else None), code, needle)


@pytest.mark.parametrize("content, needle", [
    ("{oops", "is not JSON"),
    ('{"goal": "x", "script": [{"action": "a", "outcome": "maybe"}]}', "script.0.outcome"),
    ('{"goal": "x", "budgte": {}}', "budgte: Extra inputs are not permitted"),
])
def test_malformed_goal_file_exit_2(state, tmp_path, content, needle):
    f = tmp_path / "goal.json"
    f.write_text(content, encoding="utf-8")
    one_line_error(ars("loop", "run", "--goal-file", str(f), state=state), 2, needle)


def test_decision_on_a_loop_not_waiting_exit_2(state):
    s = ars_json("loop", "run", "--goal-file", str(GOALS / "release-notes.json"), state=state)
    for args in (["approve", s["loop_id"]], ["reject", s["loop_id"], "--reason", "no"],
                 ["respond", s["loop_id"], "yes"], ["edit", s["loop_id"], "--args", "{}"]):
        one_line_error(ars("loop", *args, state=state), 2, "is not waiting for a decision (status done)")
    one_line_error(ars("loop", "cancel", s["loop_id"], state=state), 2, "already done")


def test_list_on_a_missing_state_dir_exit_2(tmp_path):
    one_line_error(ars("loop", "list", state=tmp_path / "nope"), 2, "does not exist")
