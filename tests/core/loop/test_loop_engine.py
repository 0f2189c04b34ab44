"""The OODA engine with the offline policy on a real state directory: every
exit path, what each iteration records (ledger + memory, recalled by the next
observe), people's decisions (approve, reject by policy, edit, respond), and
the first-principles checks kept in the history."""

from __future__ import annotations

import pytest

from core.loop.decisions import AlreadyDecided, NotWaiting, decide
from core.errors import BadQuery

from conftest import SAMPLE
from core.ingest.pipeline import ingest
from loophelp import engine, goal, loop_events, sample


def history(eng, loop_id):
    entries, problems = eng.store.history(loop_id)
    assert problems == []
    return entries


def assert_consistent(eng, state_dir, s):
    """History, ledger and memory agree: one transition event per entry, one
    record and one episode per iteration, nothing twice."""
    entries = history(eng, s.loop_id)
    assert [e.index for e in entries] == list(range(1, s.seq + 1))
    trans = loop_events(state_dir, s.loop_id, "loop.transition")
    assert sorted(e.data["seq"] for e in trans) == [e.index for e in entries]
    assert len({e.event_id for e in trans}) == len(trans)
    records = loop_events(state_dir, s.loop_id, "loop.record")
    iterations = sorted(r.data["iteration"] for r in records)
    assert iterations == sorted(set(iterations)) == [r.iteration for r in s.iterations]
    stored = [i for i in eng.memory.sqlite.ids() if i.startswith(f"loop:{s.loop_id}:")
              and i.count(":") == 2]
    assert sorted(stored) == sorted(f"loop:{s.loop_id}:{i}" for i in iterations)
    return entries


# -- exits ---------------------------------------------------------------------------------
def test_done_records_each_iteration_and_the_next_observe_recalls_it(state_dir, memory):
    ingest(memory, [SAMPLE])
    eng = engine(state_dir, memory)
    s = eng.create(sample("release-notes.json"))
    s = eng.run(s.loop_id)
    assert s.status == "done" and s.exit_reason.startswith("verified")
    assert [r.verification.outcome for r in s.iterations] == ["pass", "pass", "pass"]
    entries = assert_consistent(eng, state_dir, s)
    # the steps run in OODA order, every iteration
    steps = [e.to_step for e in entries if e.kind == "step"]
    assert steps[:6] == ["orient", "decide", "act", "verify", "record", "observe"]
    # observe keeps the RecallResult; iteration 2 recalls the episode iteration 1 recorded
    observes = [e for e in entries if e.from_step == "observe" and e.to_step == "orient"]
    assert len(observes) == 3 and all(e.detail["recall"]["tiers"] for e in observes)
    hits2 = [h["episode_id"] for h in observes[1].detail["recall"]["hits"]]
    assert f"loop:{s.loop_id}:1" in hits2
    # the recall tool found the ingested sessions; the note tool wrote a memory
    assert "openclaw:" in s.iterations[0].result.output
    note_id = s.iterations[2].result.data["episode_id"]
    assert note_id.startswith(f"loop:{s.loop_id}:note:")
    assert note_id in [h.episode_id for h in memory.recall("ARS 0.2 release notes draft", k=3).hits]
    rec = loop_events(state_dir, s.loop_id, "loop.record")[0]
    assert rec.event_id.startswith("loop.record:") and rec.data["record"]["verification"]["outcome"] == "pass"


def test_consecutive_failures_block_with_blockers_and_a_person_can_unblock(state_dir, memory):
    eng = engine(state_dir, memory)
    s = eng.run(eng.create(sample("flaky-ci.json")).loop_id)
    assert s.status == "blocked"
    assert s.consecutive_failures == 3 and s.exit_reason == "3 consecutive failures (limit 3)"
    assert len(s.blockers) == 3 and "timed out again after 60 s" in s.blockers[0]
    assert s.pending_approval.kind == "unblock" and s.pending_approval.allowed == ["respond", "reject"]
    assert eng.run(s.loop_id).status == "blocked"  # no decision yet: stays put
    decide(state_dir, s.loop_id, "respond", note="bisect the runner image between 11-02 and 11-09")
    s = eng.run(s.loop_id)
    assert s.status == "done" and s.iterations[-1].iteration == 4
    assert s.answers[-1].answer.startswith("bisect")
    assert_consistent(eng, state_dir, s)


def test_unblocking_at_the_last_iteration_grants_one_more_and_says_so(state_dir, memory):
    eng = engine(state_dir, memory)
    g = goal([{"action": f"retry {i}", "outcome": "fail", "reason": "timeout"} for i in range(3)]
             + [{"action": "pin the driver", "outcome": "pass"}],
             budget={"max_iterations": 3, "max_consecutive_failures": 3})
    s = eng.run(eng.create(g).loop_id)
    assert s.status == "blocked" and s.iteration == 3
    decide(state_dir, s.loop_id, "respond", note="pin the driver to 5.26")
    s = eng.run(s.loop_id)
    assert s.status == "done" and s.budget.max_iterations == 4
    entry = next(e for e in eng.store.history(s.loop_id)[0] if e.kind == "decision")
    assert entry.reason.endswith("(iteration budget raised to 4)")


def test_a_person_may_decline_to_unblock(state_dir, memory):
    eng = engine(state_dir, memory)
    s = eng.run(eng.create(sample("flaky-ci.json")).loop_id)
    decide(state_dir, s.loop_id, "reject", note="park it until the runner image is replaced")
    s = eng.run(s.loop_id)
    assert s.status == "aborted" and "declined to unblock: park it" in s.exit_reason


def test_iteration_budget_aborts(state_dir, memory):
    eng = engine(state_dir, memory)
    g = goal([{"action": "poll the queue"}] * 6, budget={"max_iterations": 2, "max_consecutive_failures": 5})
    s = eng.run(eng.create(g).loop_id)
    assert s.status == "aborted"
    assert s.exit_reason == "budget: all 2 iterations used without a verified result"
    assert [r.verification.outcome for r in s.iterations] == ["unknown", "unknown"]  # nothing verified a script
    assert_consistent(eng, state_dir, s)


def test_wall_clock_budget_aborts(state_dir, memory):
    eng = engine(state_dir, memory)
    g = goal([{"action": "wait for the backup", "tool": "wait", "args": {"seconds": 0.4}}] * 5,
             budget={"max_iterations": 10, "max_seconds": 0.6})
    s = eng.run(eng.create(g).loop_id)
    assert s.status == "aborted" and s.exit_reason == "budget: 0.6 s of wall-clock used"
    assert len(s.iterations) >= 1 and len(s.iterations) < 5 and s.elapsed_s >= 0.6


def test_a_plan_that_runs_out_blocks_instead_of_claiming_done(state_dir, memory):
    eng = engine(state_dir, memory)
    s = eng.run(eng.create(goal([{"action": "draft the fix", "outcome": "pass", "done": False}])).loop_id)
    assert s.status == "blocked"
    assert "the plan has no more steps and the goal is not verified done" in s.exit_reason


def test_cancel_aborts_once(state_dir, memory):
    eng = engine(state_dir, memory)
    s = eng.run(eng.create(sample("deploy-hotfix.json")).loop_id)
    assert s.status == "waiting_human"
    s = eng.cancel(s.loop_id, "the hotfix was superseded by 1.4.3")
    assert s.status == "aborted" and s.exit_reason == "cancelled: the hotfix was superseded by 1.4.3"
    with pytest.raises(BadQuery, match="already aborted"):
        eng.cancel(s.loop_id, "again")


def test_a_failing_tool_is_a_failed_iteration(state_dir, memory):
    eng = engine(state_dir, memory)
    g = goal([{"action": "compress the backup", "tool": "zip_it"},
              {"action": "read the config", "tool": "recall", "args": {"q": "x"}}],
             budget={"max_iterations": 5, "max_consecutive_failures": 2})
    s = eng.run(eng.create(g).loop_id)
    assert s.status == "blocked"
    errors = [r.result.error for r in s.iterations]
    assert "unknown tool 'zip_it'" in errors[0]
    assert "missing argument(s): query" in errors[1]


# -- people ------------------------------------------------------------------------------
def test_risky_action_waits_then_approve_resumes_to_done(state_dir, memory):
    eng = engine(state_dir, memory)
    s = eng.run(eng.create(sample("deploy-hotfix.json")).loop_id)
    assert s.status == "waiting_human" and s.current_step == "decide"
    p = s.pending_approval
    assert p.kind == "approval" and p.action.tool == "shell" and "risky" in p.risk
    assert p.allowed == ["approve", "reject", "edit"]
    assert not any(r.action.tool == "shell" for r in s.iterations)  # nothing ran yet
    decide(state_dir, s.loop_id, "approve", note="staging window is open")
    s = eng.run(s.loop_id)
    assert s.status == "done"
    shell = s.iterations[1]
    assert shell.result.ok and "restarted ars-recall on 1.4.2" in shell.result.output
    assert shell.decision == "approve: staging window is open"
    ev = loop_events(state_dir, s.loop_id, "human.decision")
    assert len(ev) == 1 and ev[0].data["kind"] == "approve" and ev[0].data["note"] == "staging window is open"
    assert ev[0].data["decided_at"] and ev[0].data["decided_by"]
    assert_consistent(eng, state_dir, s)


def test_second_decision_and_decisions_on_a_loop_not_waiting_are_refused(state_dir, memory):
    eng = engine(state_dir, memory)
    s = eng.run(eng.create(sample("deploy-hotfix.json")).loop_id)
    req = s.pending_approval.request_id
    decide(state_dir, s.loop_id, "approve", note="go")
    with pytest.raises(AlreadyDecided, match=f"request {req} of loop {s.loop_id} was already approved at .* \\(go\\); "
                                             "a second decision is refused"):
        decide(state_dir, s.loop_id, "reject", note="wait")
    eng.run(s.loop_id)
    with pytest.raises(NotWaiting, match=f"loop {s.loop_id} is not waiting for a decision \\(status done\\)"):
        decide(state_dir, s.loop_id, "approve")
    with pytest.raises(AlreadyDecided, match="already approved"):
        decide(state_dir, s.loop_id, "approve", request_id=req)


@pytest.mark.parametrize("kind, kw, message", [
    ("respond", {"note": "yes"}, "cannot respond an approval request"),
    ("reject", {"note": "  "}, "a rejection needs a reason"),
    ("edit", {"args": {"command": "ls"}}, "edited arguments for shell: missing argument\\(s\\): cmd"),
    ("edit", {"args": {"cmd": "ls", "sudo": True}}, "edited arguments for shell: unknown argument\\(s\\): sudo"),
    ("edit", {"args": None}, "edit needs the new arguments as a JSON object"),
    ("approve", {"request_id": "req-999"}, "has no open request 'req-999'; the open request is req-"),
])
def test_invalid_decisions_are_bad_input(state_dir, memory, kind, kw, message):
    eng = engine(state_dir, memory)
    s = eng.run(eng.create(sample("deploy-hotfix.json")).loop_id)
    with pytest.raises(BadQuery, match=message):
        decide(state_dir, s.loop_id, kind, tools=eng.tools, **kw)
    assert eng.run(s.loop_id).status == "waiting_human"  # nothing was recorded


@pytest.mark.parametrize("on_reject, status", [("skip", "done"), ("block", "blocked"), ("abort", "aborted")])
def test_reject_records_the_reason_and_follows_the_plan(state_dir, memory, on_reject, status):
    eng = engine(state_dir, memory)
    g = goal([{"action": "check the NAS mount", "outcome": "pass", "done": False},
              {"action": "delete snapshots older than 30 days", "tool": "shell",
               "args": {"cmd": "echo deleting"}, "on_reject": on_reject},
              {"action": "report the disk usage", "outcome": "pass"}])
    s = eng.run(eng.create(g).loop_id)
    decide(state_dir, s.loop_id, "reject", note="keep snapshots until the audit on Friday")
    s = eng.run(s.loop_id)
    assert s.status == status
    rejected = s.iteration_record(2)
    assert rejected.verification.outcome == "fail"
    assert rejected.verification.reason == "rejected by a person: keep snapshots until the audit on Friday"
    assert rejected.result is None  # the shell never ran
    assert rejected.decision == "reject: keep snapshots until the audit on Friday"
    ev = loop_events(state_dir, s.loop_id, "human.decision")
    assert ev[0].data["kind"] == "reject" and ev[0].data["note"].startswith("keep snapshots")
    if status == "blocked":
        assert s.blockers == [f"{rejected.verification.reason} (the plan blocks on rejection)"]
    if status == "aborted":
        assert s.exit_reason.endswith("(the plan aborts on rejection)")
    assert_consistent(eng, state_dir, s)


def test_edit_changes_what_runs(state_dir, memory, tmp_path):
    out = tmp_path / "ran.txt"
    eng = engine(state_dir, memory)
    g = goal([{"action": "prune the backup set", "tool": "shell", "args": {"cmd": f"echo rm-all >> {out}"}}])
    s = eng.run(eng.create(g).loop_id)
    decide(state_dir, s.loop_id, "edit", args={"cmd": f"echo rm-older-than-30d >> {out}"},
           note="only prune old sets", tools=eng.tools)
    s = eng.run(s.loop_id)
    assert s.status == "done"
    assert out.read_text() == "rm-older-than-30d\n"  # the edited command ran, the proposed one never did
    ev = loop_events(state_dir, s.loop_id, "human.decision")[0]
    assert ev.data["original_args"] == {"cmd": f"echo rm-all >> {out}"}
    assert ev.data["args"] == {"cmd": f"echo rm-older-than-30d >> {out}"}
    assert s.iterations[0].action.args == {"cmd": f"echo rm-older-than-30d >> {out}"}


def test_open_question_waits_and_the_answer_is_used(state_dir, memory):
    eng = engine(state_dir, memory)
    s = eng.run(eng.create(sample("vendor-question.json")).loop_id)
    assert s.status == "waiting_human" and s.pending_approval.kind == "question"
    assert s.open_questions == ["What monthly budget ceiling applies to the pilot (in USD)?"]
    decide(state_dir, s.loop_id, "respond", note="600")
    s = eng.run(s.loop_id)
    assert s.status == "done" and s.open_questions == []
    assert s.answers[0].answer == "600"
    note = memory.sqlite.get(s.iterations[-1].result.data["episode_id"])
    assert "a ceiling of 600 USD a month" in note.text
    assert note.id in [h.episode_id for h in memory.recall("pgvector ceiling USD a month", k=3).hits]


def test_a_question_about_a_risky_action_asks_then_needs_approval(state_dir, memory):
    eng = engine(state_dir, memory)
    g = goal([{"action": "restore the backup", "tool": "shell", "args": {"cmd": "echo restore {answer}"},
               "question": "Which snapshot should be restored?"}])
    s = eng.run(eng.create(g).loop_id)
    assert s.pending_approval.kind == "question"
    decide(state_dir, s.loop_id, "respond", note="2024-11-28")
    s = eng.run(s.loop_id)
    assert s.status == "waiting_human" and s.pending_approval.kind == "approval"
    assert s.pending_approval.action.args == {"cmd": "echo restore 2024-11-28"}
    decide(state_dir, s.loop_id, "approve")
    s = eng.run(s.loop_id)
    assert s.status == "done" and s.iterations[0].result.output.strip() == "restore 2024-11-28"


def test_failed_first_principles_check_is_recorded(state_dir, memory):
    eng = engine(state_dir, memory)
    s = eng.run(eng.create(sample("产品调研.json")).loop_id)
    assert s.status == "done"
    assert [r.checks_failed for r in s.iterations] == [0, 1, 0]
    entries = history(eng, s.loop_id)
    orient2 = next(e for e in entries if e.iteration == 2 and e.from_step == "orient")
    failed = [c for c in orient2.detail["checks"] if not c["result"]["passed"]]
    assert len(failed) == 1 and "failed first-principles checks" in orient2.reason
    verdict = next(v for v in failed[0]["result"]["verdicts"] if v["verdict"] == "fail")
    assert verdict["rule"] == "decompose" and verdict["evidence"][0]["text"] == "显然"
    assert s.goal_id == "产品调研" and eng.store.latest_path(s).name.startswith("产品调研__")


def test_goal_text_alone_recalls_then_asks_a_person(state_dir, memory):
    eng = engine(state_dir, memory)
    s = eng.run(eng.create(goal(None, text="Plan the migration of the NAS backups to S3")).loop_id)
    assert s.status == "waiting_human" and s.pending_approval.kind == "question"
    assert "no script" in s.pending_approval.prompt
    decide(state_dir, s.loop_id, "respond", note="move the weekly sets first; keep dailies on the NAS")
    s = eng.run(s.loop_id)
    # honest: the answer is stored, but nothing verified the goal itself
    assert s.status == "blocked" and "no more steps" in s.exit_reason
    note = memory.sqlite.get(s.iterations[-1].result.data["episode_id"])
    assert "move the weekly sets first" in note.text
