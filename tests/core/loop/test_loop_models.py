"""GoalFrame, LoopState and the transition table: allowed moves only; an
illegal one is an error and leaves nothing written."""

from __future__ import annotations

import pytest

from core.loop.goals import load_goal
from core.loop.models import (NEXT_STEP, STEPS, TRANSITIONS, GoalFrame, IllegalTransition, LoopState,
                              validate_transition)
from core.errors import BadQuery

from loophelp import GOALS, engine, goal


@pytest.mark.parametrize("move", [
    ("initialized", "active", "observe", "observe"),
    ("active", "active", "observe", "orient"),
    ("active", "active", "record", "observe"),
    ("active", "active", "orient", "record"),  # an iteration that ends early is still recorded
    ("active", "waiting_human", "decide", "decide"),
    ("waiting_human", "active", "decide", "act"),  # approved
    ("waiting_human", "active", "decide", "decide"),  # answered: decide again
    ("waiting_human", "active", "decide", "record"),  # rejected: record it
    ("active", "blocked", "record", "record"),
    ("blocked", "active", "record", "observe"),  # unblocked by a person
    ("active", "done", "record", "record"),
    ("active", "aborted", "act", "act"),
    ("waiting_human", "aborted", "decide", "decide"),
])
def test_allowed_transitions(move):
    validate_transition(*move)


@pytest.mark.parametrize("move, why", [
    (("done", "active", "record", "observe"), "done cannot become active"),
    (("aborted", "active", "observe", "observe"), "aborted cannot become active"),
    (("initialized", "done", "observe", "observe"), "initialized cannot become done"),
    (("blocked", "done", "record", "record"), "blocked cannot become done"),
    (("active", "active", "act", "decide"), "act is followed by verify"),
    (("active", "active", "observe", "act"), "observe is followed by orient"),
    (("active", "active", "verify", "verify"), "nothing changes"),
    (("waiting_human", "waiting_human", "decide", "act"), "a waiting_human loop does not step"),
    (("active", "sleeping", "act", "act"), "unknown status"),
])
def test_illegal_transitions_raise(move, why):
    with pytest.raises(IllegalTransition, match=why):
        validate_transition(*move)


def test_tables_cover_every_status_and_step():
    assert set(TRANSITIONS) == {"initialized", "active", "waiting_human", "blocked", "done", "aborted"}
    assert TRANSITIONS["done"] == TRANSITIONS["aborted"] == frozenset()
    assert [NEXT_STEP[s] for s in STEPS] == ["orient", "decide", "act", "verify", "record", "observe"]


def test_engine_refuses_an_illegal_transition_and_writes_nothing(state_dir):
    eng = engine(state_dir)
    s = eng.create(goal([{"action": "draft", "outcome": "pass"}]))
    s = eng.run(s.loop_id)
    assert s.status == "done"
    cp = eng.store.latest_path(s)
    hist = eng.store.history_path(s)
    before = (cp.read_bytes(), hist.read_bytes(), (state_dir / "ledger.jsonl").read_bytes())
    with pytest.raises(IllegalTransition, match="done cannot become active"):
        eng._commit(s, s.model_copy(update={"status": "active", "current_step": "observe"}), "status")
    assert (cp.read_bytes(), hist.read_bytes(), (state_dir / "ledger.jsonl").read_bytes()) == before


def test_goal_frame_shapes():
    g = GoalFrame.model_validate({"goal": "调研三款个人 AI 助手的记忆功能", "max_iterations": 4,
                                  "max_consecutive_failures": 2})  # the article's flat budget keys
    assert g.goal_id == "调研三款个人-AI-助手的记忆功能"
    assert (g.budget.max_iterations, g.budget.max_consecutive_failures) == (4, 2)
    with pytest.raises(ValueError, match="goal is empty"):
        GoalFrame(goal="   ")
    with pytest.raises(ValueError, match="Extra inputs"):
        GoalFrame.model_validate({"goal": "x", "scirpt": []})
    s = LoopState(loop_id="l", goal_id=g.goal_id, goal=g)
    assert (s.status, s.current_step, s.iteration) == ("initialized", "observe", 0)


@pytest.mark.parametrize("content, message", [
    ("{not json", "is not JSON"),
    ("[1, 2]", "must hold one JSON object"),
    ('{"name": "no goal"}', "goal: Field required"),
    ('{"goal": "x", "script": [{"outcome": "pass"}]}', "script.0.action: Field required"),
    ('{"goal": "x", "script": [{"action": "a", "outcome": "maybe"}]}', "script.0.outcome"),
    ('{"goal": "x", "budget": {"max_iterations": 0}}', "budget.max_iterations"),
])
def test_malformed_goal_files_are_one_line_errors(tmp_path, content, message):
    f = tmp_path / "goal.json"
    f.write_text(content, encoding="utf-8")
    with pytest.raises(BadQuery, match=message) as exc:
        load_goal(f)
    assert "\n" not in str(exc.value) and str(f) in str(exc.value)


def test_every_sample_goal_file_loads():
    names = sorted(p.name for p in GOALS.glob("*.json"))
    assert len(names) >= 5
    for name in names:
        g = load_goal(GOALS / name)
        assert g.script, name
