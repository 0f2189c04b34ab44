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


# -- 3. unusable files and bad JSON: one line, never a traceback ----------------------------------
RISKY = [{"action": "append a line", "tool": "shell", "args": {"cmd": "echo ran >> {out}"}}]


def waiting_loop(state: Path, tmp_path: Path, **kw) -> tuple[dict, Path]:
    out = tmp_path / "ran.txt"
    script = [{**RISKY[0], "args": {"cmd": f"echo ran >> '{out}'"}}]
    s = ars_json("loop", "run", "--goal-file", str(goal_file(tmp_path, script, **kw)), state=state)
    assert s["status"] == "waiting_human"
    return s, out


def test_a_checkpoint_path_that_is_a_directory(state, tmp_path):
    s, _ = waiting_loop(state, tmp_path)
    [cp] = [p for p in (state / "checkpoints").iterdir() if p.name.endswith(".json")]
    cp.unlink()
    cp.mkdir()
    for args in (["show", s["loop_id"]], ["resume", s["loop_id"]], ["approve", s["loop_id"]],
                 ["history", s["loop_id"]]):
        if args[0] == "history":
            assert ars("loop", *args, state=state).returncode == 0  # the history is fine
            continue
        one_line_error(ars("loop", *args, state=state), 1, cp.name, "is a directory, not a file", "move it aside")
    r = ars("loop", "list", "--json", state=state)
    assert r.returncode == 0 and json.loads(r.stdout) == [] and "is a directory" in r.stderr
    # the fix the line names: move it aside; the loop is rebuilt from its history
    cp.rename(cp.with_name(cp.name + ".bad"))
    r = ars("loop", "show", s["loop_id"], "--json", state=state)
    assert r.returncode == 0 and json.loads(r.stdout)["status"] == "waiting_human"
    assert ars_json("loop", "approve", s["loop_id"], state=state)["status"] == "done"


def test_a_history_path_that_is_a_directory(state, tmp_path):
    s, _ = waiting_loop(state, tmp_path)
    [h] = [p for p in (state / "checkpoints").iterdir() if p.name.endswith(".history.jsonl")]
    h.unlink()
    h.mkdir()
    for args in (["show", s["loop_id"]], ["history", s["loop_id"]], ["approve", s["loop_id"]]):
        one_line_error(ars("loop", *args, state=state), 1, h.name, "is a directory, not a file")


def corrupt(path: Path, content: bytes) -> None:
    path.write_bytes(content)


def decision_file(state: Path, s: dict) -> Path:
    from core.loop.decisions import decision_path

    return decision_path(state, s["loop_id"], s["pending_approval"]["request_id"])


@pytest.mark.parametrize("content", [b'{"loop_id": "loop-', b"", b"\x00\xff garbage"])
def test_a_torn_decision_file_is_reported_and_decided_again(state, tmp_path, content):
    s, out = waiting_loop(state, tmp_path)
    path = decision_file(state, s)
    path.parent.mkdir(exist_ok=True)
    corrupt(path, content)  # a writer that died mid-write: no human.decision in the ledger
    r = ars("loop", "show", s["loop_id"], state=state)
    assert r.returncode == 0 and "Traceback" not in r.stderr
    [line] = [l for l in r.stderr.splitlines() if l.strip()]
    assert path.name in line and "cannot be read" in line and "decide again" in line
    r = ars("loop", "list", state=state)
    assert r.returncode == 0 and path.name in r.stderr and "decide again" in r.stderr
    # resume settles it: the file is moved aside, the loop still waits (nothing was decided)
    r = ars("loop", "resume", s["loop_id"], "--json", state=state)
    assert r.returncode == 0 and json.loads(r.stdout)["status"] == "waiting_human", r.stderr
    assert "moved aside" in r.stderr and "open again" in r.stderr
    assert not path.exists() and path.with_name(path.name + ".corrupt").read_bytes() == content
    assert not out.exists()
    # and the request is decided again, exactly once
    done = ars_json("loop", "approve", s["loop_id"], state=state)
    assert done["status"] == "done" and out.read_text() == "ran\n"
    r = ars("loop", "approve", s["loop_id"], state=state)
    assert r.returncode == 2


def test_a_decision_on_a_torn_file_moves_it_aside_and_counts(state, tmp_path):
    s, out = waiting_loop(state, tmp_path)
    path = decision_file(state, s)
    path.parent.mkdir(exist_ok=True)
    corrupt(path, b'{"loop_id": "')
    (path.parent / (path.name + ".corrupt")).write_text("an older one")  # never overwritten
    r = ars("loop", "approve", s["loop_id"], "--json", state=state)
    assert r.returncode == 0 and json.loads(r.stdout)["status"] == "done", r.stderr
    assert "moved aside" in r.stderr and "Traceback" not in r.stderr
    assert (path.parent / (path.name + ".corrupt.1")).read_bytes() == b'{"loop_id": "'
    assert out.read_text() == "ran\n"


def test_a_torn_file_whose_decision_the_ledger_holds_stands(state, tmp_path):
    s, out = waiting_loop(state, tmp_path)
    r = ars("loop", "reject", s["loop_id"], "--reason", "not today", "--no-resume", state=state)
    assert r.returncode == 0, r.stderr
    path = decision_file(state, s)
    corrupt(path, path.read_bytes()[:20])  # damaged after the decision was recorded
    r = ars("loop", "show", s["loop_id"], state=state)
    assert r.returncode == 0 and "the ledger holds the decision" in r.stderr and "resume" in r.stderr
    # a second decision is still refused: the ledger's one stands
    one_line_error(ars("loop", "approve", s["loop_id"], state=state), 2, "already rejected", "not today")
    assert path.exists() and json.loads(path.read_text())["note"] == "not today"  # rebuilt from the ledger
    done = ars_json("loop", "resume", s["loop_id"], state=state, expect=(0, 1))
    assert done["decisions"][-1]["kind"] == "reject" and not out.exists()


def test_deeply_nested_goal_file_and_edit_args(state, tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text('{"goal": ' + "[" * 100000 + "]" * 100000 + "}", encoding="utf-8")
    one_line_error(ars("loop", "run", "--goal-file", str(deep), state=state), 2, str(deep), "nests", "flatten")
    deep.write_text(json.dumps({"goal": "x", "script": [{"action": "a", "args": {"k": 1}}]})
                    .replace('"k": 1', '"k": ' + "[" * 200 + "]" * 200), encoding="utf-8")
    one_line_error(ars("loop", "run", "--goal-file", str(deep), state=state), 2, "nests")
    s, _ = waiting_loop(state, tmp_path)
    for depth in (50000, 100):  # past the parser's recursion limit (one argv string stays under 128 KiB); past ours
        arg = '{"cmd": ' + "[" * depth + "]" * depth + "}"
        one_line_error(ars("loop", "edit", s["loop_id"], "--args", arg, state=state), 2, "--args", "nests")
    assert ars_json("loop", "show", s["loop_id"], state=state)["status"] == "waiting_human"


# -- 4. loop ids never collide through "__" ----------------------------------------------------------
def test_loop_lookup_is_exact_through_the_separator(state, tmp_path):
    a, _ = waiting_loop(state, tmp_path, goal_id="deploy__loop-aaaa")
    b, _ = waiting_loop(state, tmp_path, goal_id="ends_")
    for other in (f"loop-aaaa__{a['loop_id']}", f"_{b['loop_id']}", f"__{a['loop_id']}", f"aaaa__{a['loop_id']}"):
        one_line_error(ars("loop", "show", other, state=state), 2, "no loop")
    assert ars_json("loop", "show", a["loop_id"], state=state)["goal_id"] == "deploy__loop-aaaa"
    assert ars_json("loop", "show", b["loop_id"], state=state)["goal_id"] == "ends_"
    names = sorted(p.name for p in (state / "checkpoints").iterdir() if not p.name.startswith("."))
    assert all(n.count("__") == 1 for n in names), names  # one separator per name: one way to split


def test_checkpoints_named_the_old_way_stay_readable_and_keep_their_names(state, tmp_path):
    s, out = waiting_loop(state, tmp_path, goal_id="deploy__loop-aaaa")
    cp = state / "checkpoints"
    for p in list(cp.iterdir()):  # as an older ARS named them: the goal's "__" unescaped
        if not p.name.startswith("."):
            p.rename(cp / p.name.replace("%5F%5F", "__"))
    old = sorted(p.name for p in cp.iterdir() if not p.name.startswith("."))
    assert old == [f"deploy__loop-aaaa__{s['loop_id']}.history.jsonl", f"deploy__loop-aaaa__{s['loop_id']}.json"]
    one_line_error(ars("loop", "show", f"loop-aaaa__{s['loop_id']}", state=state), 2, "no loop")
    assert ars_json("loop", "show", s["loop_id"], state=state)["goal_id"] == "deploy__loop-aaaa"
    assert ars_json("loop", "approve", s["loop_id"], state=state)["status"] == "done"
    assert sorted(p.name for p in cp.iterdir() if not p.name.startswith(".")) == old  # written in place
    assert [e["index"] for e in ars_json("loop", "history", s["loop_id"], state=state)][-1] > 5


# -- 5. skipped history lines are counted ---------------------------------------------------------------
def test_history_says_which_lines_it_skipped(state, tmp_path):
    s, _ = waiting_loop(state, tmp_path)
    [h] = [p for p in (state / "checkpoints").iterdir() if p.name.endswith(".history.jsonl")]
    lines = h.read_text(encoding="utf-8").splitlines(keepends=True)
    lines.insert(2, "garbage\n")
    lines.insert(4, '{"index": "nope"}\n')
    h.write_text("".join(lines) + '{"index": 99, "torn', encoding="utf-8")
    total = len(lines) + 1
    r = ars("loop", "history", s["loop_id"], "--json", state=state)
    assert r.returncode == 0
    assert [e["index"] for e in json.loads(r.stdout)] == list(range(1, s["seq"] + 1))  # the readable ones
    [line] = [l for l in r.stderr.splitlines() if l.strip()]
    assert "skipped 3 unreadable lines" in line and f"lines 3, 5, {total}" in line and h.name in line
    r = ars("loop", "history", s["loop_id"], state=state, env={"COLUMNS": "300"})
    assert r.returncode == 0 and "skipped 3 unreadable lines" in r.stderr
    r = ars("loop", "history", s["loop_id"], "--at", "2", state=state)
    assert r.returncode == 0 and "skipped 3" in r.stderr


# -- 6. the dashboard creates nothing in an empty directory ------------------------------------------------
def test_tui_on_an_empty_directory_writes_nothing_and_demo_still_seeds_it(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    one_line_error(ars("tui", state=empty), 2, "holds no ARS state yet", f"ars demo --state {empty}")
    assert list(empty.iterdir()) == []
    # a read command leaves an empty store behind; the demo still takes the directory
    assert ars("loop", "list", state=empty).returncode == 0
    assert (empty / "memory.sqlite").exists()
    one_line_error(ars("tui", state=empty), 2, "holds no ARS state yet")
    r = ars("demo", "--no-tui", "--json", state=empty, timeout=300)
    assert r.returncode == 0, r.stderr
    assert len(json.loads(r.stdout)["loops"]) == 8
    # a real store is still refused
    one_line_error(ars("demo", "--no-tui", state=empty.parent), 2, "other data")
