"""Replay steps through a loop's history entries; fork starts a new loop from
entry N with its parent recorded and leaves the original untouched."""

from __future__ import annotations

import hashlib

import pytest

from core.api import ARS
from core.config import Settings
from core.errors import BadQuery

from loophelp import ars, ars_json, engine, sample


def digest(*paths) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(p.read_bytes())
    return h.hexdigest()


def test_replay_steps_through_every_transition(state_dir):
    with ARS(Settings(state_dir=state_dir)) as a:
        s = a.loop_start(sample("release-notes.json"))
        entries = a.loop_history(s.loop_id)
        assert [e.index for e in entries] == list(range(1, s.seq + 1))
        assert entries[0].kind == "created" and entries[0].state.status == "initialized"
        assert entries[-1].state.model_dump(exclude={"ledger_mark"}) == s.model_dump(exclude={"ledger_mark"})
        # each entry is the state after its transition: stepping reproduces the run
        for prev, cur in zip(entries, entries[1:]):
            assert cur.from_status == prev.to_status and cur.from_step == prev.to_step
            assert cur.state.seq == cur.index
        e = a.loop_entry(s.loop_id, 3)
        assert (e.from_step, e.to_step) == ("observe", "orient") and "recall" in e.detail
        with pytest.raises(BadQuery, match=f"loop {s.loop_id} has no history entry 999 \\(entries 1..{s.seq}"):
            a.loop_entry(s.loop_id, 999)


def test_fork_from_before_an_approval_takes_another_path_and_leaves_the_original(state_dir):
    with ARS(Settings(state_dir=state_dir)) as a:
        s = a.loop_start(sample("deploy-hotfix.json"))
        assert s.status == "waiting_human"
        orig = a.loops.store
        files = (orig.latest_path(s), orig.history_path(s))
        before = digest(*files)
        at = next(e.index for e in a.loop_history(s.loop_id) if e.to_status == "waiting_human")

        f = a.loop_fork(s.loop_id, at)
        assert f.loop_id != s.loop_id and f.parent.loop_id == s.loop_id and f.parent.index == at
        assert f.status == "waiting_human" and f.pending_approval.action.tool == "shell"
        fh = a.loop_history(f.loop_id)
        assert fh[0].kind == "forked" and fh[0].detail["parent"] == {"loop_id": s.loop_id, "index": at}
        assert digest(*files) == before  # forking only read the original

        # the fork is rejected, the original approved: two different outcomes
        f = a.loop_reject(f.loop_id, "not during the sale")
        assert f.status == "blocked"  # this plan blocks on rejection
        assert digest(*files) == before  # running the fork did not touch the original
        s = a.loop_approve(s.loop_id)
        assert s.status == "done"
        assert a.loop_show(f.loop_id).status == "blocked"


def test_fork_from_an_early_entry_replays_the_rest(state_dir):
    with ARS(Settings(state_dir=state_dir)) as a:
        s = a.loop_start(sample("release-notes.json"))
        f = a.loop_fork(s.loop_id, 2, run=True)  # right after it started
        assert f.status == "done" and [r.iteration for r in f.iterations] == [1, 2, 3]
        assert len(a.loop_list()[0]) == 2


def test_fork_refuses_terminal_and_missing_entries(state_dir, memory):
    eng = engine(state_dir, memory)
    s = eng.run(eng.create(sample("release-notes.json")).loop_id)
    with pytest.raises(BadQuery, match=f"entry {s.seq} of loop {s.loop_id} is done: fork from an entry before"):
        eng.fork(s.loop_id, s.seq)
    with pytest.raises(BadQuery, match="has no history entry 500"):
        eng.fork(s.loop_id, 500)


def test_cli_history_and_fork(state_dir):
    s = ars_json("loop", "run", "--goal-file", "samples/goals/deploy-hotfix.json", state=state_dir)
    hist = ars_json("loop", "history", s["loop_id"], state=state_dir)
    assert [h["index"] for h in hist] == list(range(1, s["seq"] + 1))
    r = ars("loop", "history", s["loop_id"], state=state_dir, env={"COLUMNS": "240"})
    assert r.returncode == 0 and "approval needed: tool 'shell' is risky" in r.stdout
    r = ars("loop", "history", s["loop_id"], "--at", "3", state=state_dir, env={"COLUMNS": "240"})
    assert r.returncode == 0 and "entry 3" in r.stdout and "recall" in r.stdout
    f = ars_json("loop", "fork", s["loop_id"], "--at", str(s["seq"]), state=state_dir)
    assert f["parent"] == {"loop_id": s["loop_id"], "index": s["seq"]} and f["status"] == "waiting_human"
    r = ars("loop", "fork", s["loop_id"], "--at", "77", state=state_dir)
    assert r.returncode == 2 and "has no history entry 77" in r.stderr
