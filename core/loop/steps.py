"""The six steps of an iteration (observe, orient, decide, act, verify, record)
and the exits they lead to.

Exits (honest): ``done`` only when verify passed and the policy says the
goal is complete; ``blocked`` after ``max_consecutive_failures`` failed
iterations or when the plan runs out (blockers recorded, a person may
unblock); ``waiting_human`` for a risky action or an open question;
``aborted`` when a budget (iterations, wall-clock, tokens) is spent, a person
rejects with abort, or the loop is cancelled.
"""

from __future__ import annotations

import time
from typing import Any

from core.events import LOOP_RECORD_EVENT
from core.govern.redact import redact_episode, redact_value
from core.ledger.ledger import Event, content_id
from core.loop import checker
from core.loop.models import (HitBrief, IterationRecord, LoopState, Observation, PendingApproval, ToolResult,
                              Verification)
from core.loop.policies.protocol import Policy, PolicyError
from core.loop.tools import ToolContext, ToolRegistry
from core.loop.transitions import Transitions, crash_point
from core.errors import BadQuery
from core.models import Episode

RECALL_K = 5
KEEP_ITERATIONS = 20  # iteration summaries kept in the state (all of them are in the ledger and memory)


class Steps(Transitions):
    """One step a call (``_step``); the engine sets ``memory``, ``tools`` and, while a
    loop runs, ``_policy``."""

    memory: Any
    tools: ToolRegistry
    _policy: Policy | None

    def _over_budget(self, state: LoopState) -> str | None:
        b = state.budget
        if state.current_step == "observe" and state.iteration > b.max_iterations:
            return f"budget: all {b.max_iterations} iterations used"
        if b.max_seconds is not None and state.elapsed_s + (time.monotonic() - self._mark) >= b.max_seconds:
            return f"budget: {b.max_seconds:g} s of wall-clock used"
        if b.max_tokens is not None and state.tokens_used >= b.max_tokens:
            return f"budget: {state.tokens_used} of {b.max_tokens} tokens used"
        return None

    def _step(self, state: LoopState) -> LoopState:
        over = self._over_budget(state)
        if over:
            return self._commit(state, state.model_copy(update={"status": "aborted", "exit_reason": over}),
                                "status", over)
        return getattr(self, f"_{state.current_step}")(state)

    def _fail_iteration(self, state: LoopState, error: str, **extra: Any) -> LoopState:
        """End the iteration early: straight to record, as a failure."""
        return self._commit(state, state.model_copy(update={
            "current_step": "record", "last_error": error,
            "verification_result": Verification(outcome="fail", reason=error), **extra}), "step", error)

    def _observe(self, state: LoopState) -> LoopState:
        query = state.goal.goal
        rr = None
        try:
            rr = self.memory.recall(query, k=RECALL_K)
            obs = Observation(query=query, degraded=rr.degraded, tiers={t.tier: t.status for t in rr.tiers},
                              hits=[HitBrief(episode_id=h.episode_id, score=h.score, snippet=h.snippet)
                                    for h in rr.hits])
        except BadQuery as exc:
            obs = Observation(query=query, error=str(exc))
        except Exception as exc:  # noqa: BLE001 - memory trouble is an observation, not a crash
            obs = Observation(query=query, error=" ".join(str(exc).split())[:200] or type(exc).__name__)
        new = state.model_copy(update={
            "current_step": "orient", "observation": obs, "last_observation": obs.summary(), "premises": [],
            "working_hypotheses": [], "selected_action": None, "approved": False, "checks": [],
            "action_result": None, "verification_result": None, "last_error": None, "exit_after_record": None})
        reason = obs.error or f"recalled {len(obs.hits)} memories" + (" (degraded)" if obs.degraded else "")
        return self._commit(state, new, "step", reason, {"recall": rr.model_dump(mode="json") if rr else None})

    def _orient(self, state: LoopState) -> LoopState:
        assert self._policy is not None
        try:
            o = self._policy.orient(state, checker.check_orientation)
        except PolicyError as exc:
            return self._fail_iteration(state, f"orient: {exc}")
        failed = [c for c in o.checks if not c.result.passed]
        new = state.model_copy(update={
            "current_step": "decide", "premises": o.premises, "working_hypotheses": o.hypotheses,
            "checks": [*state.checks, *o.checks], "tokens_used": state.tokens_used + o.tokens})
        np, nh = len(o.premises), len(o.hypotheses)
        reason = f"{np} premise{'s' * (np != 1)}, {nh} hypothes{'e' if nh != 1 else 'i'}s"
        if failed:
            reason += f"; {len(failed)} failed first-principles checks"
        return self._commit(state, new, "step", reason, {
            "premises": [p.model_dump() for p in o.premises],
            "hypotheses": [h.model_dump() for h in o.hypotheses],
            "checks": [c.model_dump(mode="json") for c in o.checks]})

    def _decide(self, state: LoopState) -> LoopState:
        assert self._policy is not None
        try:
            c = self._policy.decide(state, checker.check_decision)
        except PolicyError as exc:
            return self._fail_iteration(state, f"decide: {exc}")
        common = {"checks": [*state.checks, *c.checks], "tokens_used": state.tokens_used + c.tokens}
        detail = {"action": c.action.model_dump() if c.action else None, "question": c.question,
                  "checks": [r.model_dump(mode="json") for r in c.checks]}
        request_id = f"req-{state.seq + 1}"
        if c.question:
            req = PendingApproval(request_id=request_id, kind="question", prompt=c.question, action=c.action,
                                  allowed=["respond", "reject"], iteration=state.iteration)
            return self._commit(state, state.model_copy(update={
                **common, "status": "waiting_human", "pending_approval": req, "needs_human_input": True,
                "selected_action": c.action, "open_questions": [*state.open_questions, c.question]}),
                "status", f"question: {c.question}", detail)
        action = c.action
        if action is None:
            return self._fail_iteration(state, "decide: no action chosen", **common)
        risky = self.tools.is_risky(action.tool)
        if (risky or action.needs_approval) and not self._approved(state):
            why = f"tool {action.tool!r} is risky" if risky else "the plan asks for approval before this action"
            req = PendingApproval(request_id=request_id, kind="approval", action=action, risk=why,
                                  prompt=f"approve {action.tool}: {action.description or action.tool}",
                                  allowed=["approve", "reject", "edit"], iteration=state.iteration)
            return self._commit(state, state.model_copy(update={
                **common, "status": "waiting_human", "pending_approval": req, "needs_human_input": True,
                "selected_action": action}), "status", f"approval needed: {why}", detail)
        return self._commit(state, state.model_copy(update={**common, "current_step": "act",
                                                            "selected_action": action}),
                            "step", f"chose {action.tool}: {action.description}"[:200], detail)

    def _act(self, state: LoopState) -> LoopState:
        action = state.selected_action
        ctx = ToolContext(state_dir=self.state_dir, memory=self.memory, loop_id=state.loop_id,
                          goal_id=state.goal_id, iteration=state.iteration)
        if action is None:
            result = ToolResult(ok=False, error="no action was chosen")
        elif (self.tools.is_risky(action.tool) or action.needs_approval) and not self._approved(state):
            # defence in depth: a risky tool never runs without this loop's own approval of
            # this iteration, whatever the state's flag says (a fork made by an older ARS
            # copied its parent's): ask a person instead
            why = f"tool {action.tool!r} is risky" if self.tools.is_risky(action.tool) else \
                "the plan asks for approval before this action"
            req = PendingApproval(request_id=f"req-{state.seq + 1}", kind="approval", action=action, risk=why,
                                  prompt=f"approve {action.tool}: {action.description or action.tool}",
                                  allowed=["approve", "reject", "edit"], iteration=state.iteration)
            return self._commit(state, state.model_copy(update={
                "status": "waiting_human", "pending_approval": req, "needs_human_input": True, "approved": False}),
                "status", f"approval needed: {why} (no approval of this loop for it)")
        else:
            result = self.tools.run(action.tool, action.args, ctx)
        crash_point("tool", state)
        reason = f"{action.tool if action else 'nothing'}: " + ("ok" if result.ok else result.error)
        return self._commit(state, state.model_copy(update={"current_step": "verify", "action_result": result}),
                            "step", reason[:200], {"result": result.model_dump()})

    def _verify(self, state: LoopState) -> LoopState:
        assert self._policy is not None
        try:
            j = self._policy.verify(state)
        except PolicyError as exc:
            return self._fail_iteration(state, f"verify: {exc}")
        v = j.verification
        return self._commit(state, state.model_copy(update={
            "current_step": "record", "verification_result": v, "tokens_used": state.tokens_used + j.tokens}),
            "step", f"{v.outcome}: {v.reason}"[:200], {"verification": v.model_dump(mode="json")})

    def _episode(self, state: LoopState, rec: IterationRecord) -> Episode:
        v = rec.verification
        a = rec.action
        what = f"{a.tool} {a.description}".strip() if a else "no action"
        text = "\n".join(filter(None, [
            f"Loop {state.loop_id} iteration {state.iteration} towards the goal: {state.goal.goal}",
            f"Action: {what}" + (f" args {a.args}" if a and a.args else ""),
            f"Result: {'ok' if rec.result.ok else 'failed'} {rec.result.error or rec.result.output[:500]}"
            if rec.result else "",
            f"Verification: {v.outcome}: {v.reason}" if v else "",
            f"Person: {rec.decision}" if rec.decision else "",
            "Premises: " + "; ".join(p.text for p in state.premises) if state.premises else "",
        ]))
        ts = v.ts if v else state.updated_at
        return Episode(id=rec.episode_id, source="loop", session_id=state.loop_id, agent="ars-loop",
                       channel="loop", summary=f"{state.goal_id} #{state.iteration}: {what} -> "
                                                f"{v.outcome if v else 'unknown'}"[:200],
                       text=text, topics=[state.goal_id], first_ts=ts, last_ts=ts, message_count=1,
                       meta={"loop_id": state.loop_id, "goal_id": state.goal_id, "iteration": state.iteration,
                             "outcome": v.outcome if v else "unknown"})

    def _stored(self, episode: Episode) -> bool:
        try:
            old = self.memory.sqlite.get(episode.id)
        except Exception:  # noqa: BLE001 - when unsure, store (an upsert by id)
            return False
        # where it was written (namespace, host) is stamped by the store, not by this loop
        where = {"namespace", "host"}
        return old is not None and old.model_dump(mode="json", exclude=where) == episode.model_dump(mode="json", exclude=where)

    def _record(self, state: LoopState) -> LoopState:
        assert self._policy is not None
        v = state.verification_result or Verification(outcome="unknown", reason="not verified",
                                                      ts=state.updated_at)
        decision = next((f"{d.kind}: {d.note}".strip(": ") for d in reversed(state.decisions)
                         if d.iteration == state.iteration), "")
        rec = IterationRecord(iteration=state.iteration, action=state.selected_action, result=state.action_result,
                              verification=v, checks_failed=sum(not c.result.passed for c in state.checks),
                              decision=decision, episode_id=f"loop:{state.loop_id}:{state.iteration}")
        # secrets never enter memory: what a tool printed is redacted in the record (ledger,
        # checkpoint) and in the episode; redaction is deterministic, so a replayed step
        # writes the same record and finds its episode stored
        rec = IterationRecord.model_validate(redact_value(rec.model_dump(mode="json")))
        episode = redact_episode(self._episode(state, rec))
        event = Event(content_id(LOOP_RECORD_EVENT, state.loop_id, state.iteration), LOOP_RECORD_EVENT, {
            "loop_id": state.loop_id, "goal_id": state.goal_id, "iteration": state.iteration,
            "record": rec.model_dump(mode="json"), "episode_id": episode.id}, ts=v.ts.isoformat())
        mark = self._append_once([event], state.ledger_mark)
        crash_point("record_ledger", state)
        if not self._stored(episode):  # a replayed record step stores nothing twice
            self.memory.store([episode])
        crash_point("record_memory", state)

        fails = 0 if v.outcome == "pass" else state.consecutive_failures + (v.outcome == "fail")
        base = {**self._policy.advance(state), "ledger_mark": mark, "consecutive_failures": fails,
                "iterations": [*state.iterations, rec][-KEEP_ITERATIONS:]}
        after = state.model_copy(update=base)
        b = state.budget
        detail = {"record_event": event.event_id, "episode_id": episode.id, "outcome": v.outcome}
        if state.exit_after_record == "abort":
            why = f"{v.reason} (the plan aborts on rejection)"
            return self._commit(state, after.model_copy(update={"status": "aborted", "exit_reason": why,
                                                                 "exit_after_record": None}), "status", why, detail)
        if state.exit_after_record == "block":
            why = f"{v.reason} (the plan blocks on rejection)"
            return self._block(state, after.model_copy(update={"exit_after_record": None}), why, [why], detail)
        if v.outcome == "pass" and v.goal_done:
            why = f"verified: {v.reason}"
            return self._commit(state, after.model_copy(update={"status": "done", "exit_reason": why,
                                                                 "blockers": []}), "status", why, detail)
        if fails >= b.max_consecutive_failures:
            recent = [f"iteration {r.iteration}: {r.action.description or r.action.tool if r.action else 'no action'}"
                      f" failed: {r.verification.reason if r.verification else ''}"
                      for r in after.iterations[-fails:]]
            why = f"{fails} consecutive failures (limit {b.max_consecutive_failures})"
            return self._block(state, after, why, recent, detail)
        if self._policy.exhausted(after):
            why = f"the plan has no more steps and the goal is not verified done (last outcome: {v.outcome})"
            return self._block(state, after, why, [why], detail)
        if state.iteration >= b.max_iterations:
            why = f"budget: all {b.max_iterations} iterations used without a verified result"
            return self._commit(state, after.model_copy(update={"status": "aborted", "exit_reason": why}),
                                "status", why, detail)
        hint = None if v.outcome == "pass" else f"iteration {state.iteration} {v.outcome}: {v.reason}"
        return self._commit(state, after.model_copy(update={
            "current_step": "observe", "iteration": state.iteration + 1, "next_iteration_hint": hint}),
            "step", f"recorded iteration {state.iteration}: {v.outcome}", detail)

    def _block(self, state: LoopState, after: LoopState, why: str, blockers: list[str],
               detail: dict[str, Any]) -> LoopState:
        req = PendingApproval(request_id=f"req-{state.seq + 1}", kind="unblock",
                              prompt=f"blocked: {why}. Respond with guidance to retry, or reject to abort.",
                              allowed=["respond", "reject"], iteration=state.iteration)
        return self._commit(state, after.model_copy(update={
            "status": "blocked", "blockers": blockers, "exit_reason": why, "pending_approval": req,
            "needs_human_input": True}), "status", why, detail)

    @staticmethod
    def _approved(state: LoopState) -> bool:
        """A person approved (or edited) the selected action on a request of this very
        loop: the flag is set only with that decision, and observe clears it."""
        last = state.decisions[-1] if state.decisions else None
        return state.approved and last is not None and last.loop_id == state.loop_id \
            and last.kind in ("approve", "edit")
