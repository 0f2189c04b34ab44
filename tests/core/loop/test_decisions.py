"""Human decisions: exactly once per request (exclusive create of the
approvals file), recorded in the ledger with time and note, applied when the
loop resumes from its checkpoint, even after a crash between the claim and
the ledger write; refusals are one clear line at the command line."""

from __future__ import annotations

import json

import pytest

from core.loop.decisions import AlreadyDecided, claim, decision_path, decide
from core.loop.models import Decision

from loophelp import ars, ars_json, engine, goal, loop_events, sample


@pytest.fixture
def waiting(state_dir, memory):
    eng = engine(state_dir, memory)
    s = eng.run(eng.create(sample("deploy-hotfix.json")).loop_id)
    assert s.status == "waiting_human"
    return eng, s


def test_claim_is_exclusive_and_complete(state_dir, waiting):
    _, s = waiting
    p = s.pending_approval
    first = Decision(loop_id=s.loop_id, request_id=p.request_id, kind="approve", note="first", decided_by="a")
    second = Decision(loop_id=s.loop_id, request_id=p.request_id, kind="reject", note="second", decided_by="b")
    claim(state_dir, first)
    with pytest.raises(AlreadyDecided, match=r"was already approved at .* by a \(first\); a second decision is refused"):
        claim(state_dir, second)
    path = decision_path(state_dir, s.loop_id, p.request_id)
    assert Decision.model_validate_json(path.read_text()).note == "first"
    assert [f.name for f in path.parent.iterdir()] == [path.name]  # no temp file left behind


def test_a_claim_without_its_ledger_event_is_completed_on_resume(state_dir, waiting):
    eng, s = waiting
    p = s.pending_approval
    # as if the deciding process died right after the exclusive create
    claim(state_dir, Decision(loop_id=s.loop_id, request_id=p.request_id, kind="approve", note="late"))
    assert loop_events(state_dir, s.loop_id, "human.decision") == []
    s = eng.run(s.loop_id)
    assert s.status == "done"
    [ev] = loop_events(state_dir, s.loop_id, "human.decision")
    assert ev.data["note"] == "late"
    eng.run(s.loop_id)  # running again changes nothing
    assert len(loop_events(state_dir, s.loop_id, "human.decision")) == 1


def test_decision_is_recorded_with_time_and_note_then_resumes(state_dir, waiting):
    eng, s = waiting
    d = decide(state_dir, s.loop_id, "approve", note="change window CHG-2231 is open")
    [ev] = loop_events(state_dir, s.loop_id, "human.decision")
    assert ev.event_id.startswith("human.decision:")
    assert ev.data["note"] == "change window CHG-2231 is open" and ev.data["request_id"] == d.request_id
    assert ev.data["decided_at"].startswith(d.decided_at.isoformat()[:19])
    # recorded only: the loop still waits until it resumes from its checkpoint
    assert eng.store.load(s.loop_id).state.status == "waiting_human"
    s = eng.run(s.loop_id)
    assert s.status == "done" and s.decisions[0].note == "change window CHG-2231 is open"


def test_cli_decisions_and_refusals(state_dir, waiting):
    _, s = waiting
    r = ars("loop", "approve", s.loop_id, "--note", "go", "--no-resume", state=state_dir)
    assert r.returncode == 0, r.stderr
    assert "waiting for a person" in r.stdout  # recorded, not yet resumed
    r = ars("loop", "reject", s.loop_id, "--reason", "too late", state=state_dir)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "already approved" in lines[0] and "(go)" in lines[0] \
        and "a second decision is refused" in lines[0]
    done = ars_json("loop", "resume", s.loop_id, state=state_dir)
    assert done["status"] == "done"
    r = ars("loop", "approve", s.loop_id, state=state_dir)
    assert r.returncode == 2 and "is not waiting for a decision (status done)" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_cli_edit_respond_and_reject(state_dir, memory, tmp_path):
    eng = engine(state_dir, memory)
    out = tmp_path / "out.txt"
    g = goal([{"action": "archive the old sets", "tool": "shell", "args": {"cmd": f"echo all >> {out}"}}])
    s = eng.run(eng.create(g).loop_id)
    r = ars("loop", "edit", s.loop_id, "--args", "[1]", state=state_dir)
    assert r.returncode == 2 and "--args must be a JSON object" in r.stderr
    r = ars("loop", "edit", s.loop_id, "--args", "{bad", state=state_dir)
    assert r.returncode == 2 and "--args is not JSON" in r.stderr
    data = ars_json("loop", "edit", s.loop_id, "--args", json.dumps({"cmd": f"echo 2023-only >> {out}"}),
                    "--note", "only 2023", state=state_dir)
    assert data["status"] == "done" and out.read_text() == "2023-only\n"

    q = eng.run(eng.create(sample("vendor-question.json")).loop_id)
    r = ars("loop", "approve", q.loop_id, state=state_dir)
    assert r.returncode == 2 and "cannot approve a question" in r.stderr and "use respond or reject" in r.stderr
    r = ars("loop", "respond", q.loop_id, "", state=state_dir)
    assert r.returncode == 2 and "a response needs text" in r.stderr
    assert ars_json("loop", "respond", q.loop_id, "750", state=state_dir)["status"] == "done"

    b = eng.run(eng.create(sample("flaky-ci.json")).loop_id)
    r = ars("loop", "reject", b.loop_id, state=state_dir)
    assert r.returncode == 2 and "a rejection needs a reason" in r.stderr
    data = ars_json("loop", "reject", b.loop_id, "--reason", "wait for the new runner image", state=state_dir,
                    expect=1)  # the loop ends aborted: exit 1
    assert data["status"] == "aborted" and "wait for the new runner image" in data["exit_reason"]


def test_pinning_the_request_refuses_a_stale_decision(state_dir, memory):
    eng = engine(state_dir, memory)
    g = goal([{"action": "rotate key A", "tool": "shell", "args": {"cmd": "true"}},
              {"action": "rotate key B", "tool": "shell", "args": {"cmd": "true"}}])
    s = eng.run(eng.create(g).loop_id)
    first = s.pending_approval.request_id
    decide(state_dir, s.loop_id, "approve", request_id=first)
    s = eng.run(s.loop_id)
    assert s.status == "waiting_human" and s.pending_approval.request_id != first
    # someone still looking at the first request approves it again: refused, the new one untouched
    with pytest.raises(AlreadyDecided, match=f"request {first} .* already approved"):
        decide(state_dir, s.loop_id, "approve", request_id=first)
    assert eng.run(s.loop_id).status == "waiting_human"
