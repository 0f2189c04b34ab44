"""The OODA engine: observe -> orient -> decide -> act -> verify -> record.

Every transition is one commit, in this order:

1. a ``HistoryEntry`` appended (and fsync'd) to the loop's history file;
2. a ``loop.transition`` event in the ledger, with the stable id
   ``content_id("loop.transition", loop_id, seq)``, appended only if absent;
3. the checkpoint replaced atomically.

A crash between 1 and 3 leaves a history entry newer than the checkpoint;
loading rolls forward to it and re-emits its ledger event if it is missing,
so a SIGKILL at any point loses nothing acknowledged and duplicates nothing.
The ``record`` step writes ``loop.record`` (stable id per loop and iteration,
appended only if absent) and upserts an ``Episode`` (stable id
``loop:<loop_id>:<iteration>``) into memory, so the next observe recalls it.
Tool side effects are at-least-once: a tool killed mid-run is run again.

Exits (honest): ``done`` only when verify passed and the policy says the
goal is complete; ``blocked`` after ``max_consecutive_failures`` failed
iterations or when the plan runs out (blockers recorded, a person may
unblock); ``waiting_human`` for a risky action or an open question;
``aborted`` when a budget (iterations, wall-clock, tokens) is spent, a person
rejects with abort, or the loop is cancelled.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path
from typing import Any

from core.config import Settings
from core.govern.redact import redact_episode, redact_value
from core.events import LOOP_RECORD_EVENT, LOOP_TRANSITION_EVENT
from core.ledger.ledger import Event, Ledger, content_id
from core.models import Episode
from core.errors import BadQuery
from core.loop import checker
from core.loop.checkpoints import CheckpointStore, Loaded, last_entry
from core.loop.decisions import CorruptDecision, find_decision, record_decision_event, settle_corrupt
from core.loop.models import (TERMINAL, Answer, Decision, GoalFrame, HistoryEntry, HitBrief, IterationRecord, LoopState,
                     Observation, ParentRef, PendingApproval, ToolResult, Verification, now, validate_transition)
from core.loop.policies import LlmPolicy, OfflinePolicy, Policy, PolicyError
from core.loop.tools import ToolContext, ToolRegistry, default_registry

RECALL_K = 5
KEEP_ITERATIONS = 20  # iteration summaries kept in the state (all of them are in the ledger and memory)
CRASH_ENV = "ARS_LOOP_CRASH_AT"  # fault injection for the crash tests: "<point>.<step>@<iteration>"


def new_loop_id() -> str:
    return f"loop-{uuid.uuid4().hex[:12]}"


def _crash(point: str, state: LoopState) -> None:
    """SIGKILL this process at a named point when ``ARS_LOOP_CRASH_AT`` asks for it
    (tests only: it proves recovery from a kill between any two writes)."""
    want = os.environ.get(CRASH_ENV)
    if want and want == f"{point}.{state.current_step}@{state.iteration}":
        os.kill(os.getpid(), signal.SIGKILL)


def rules_text() -> str:
    soul = checker.load_soul()
    return "\n".join(f"{i}. {soul.titles[r]}" for i, r in enumerate(checker.RULES, 1))


class Engine:
    def __init__(self, state_dir: Path, memory: Any, settings: Settings | None = None,
                 tools: ToolRegistry | None = None, *, store: CheckpointStore | None = None,
                 llm_client: Any = None):
        self.state_dir = Path(state_dir)
        self.memory = memory
        self.settings = settings or Settings(state_dir=self.state_dir)
        self.tools = tools or default_registry()
        self.store = store or CheckpointStore(self.state_dir)
        self.ledger = Ledger(self.state_dir)
        self.llm_client = llm_client
        self.warnings: list[str] = self.store.warnings  # one list: what the store and the engine report
        self._mark = time.monotonic()
        self._policy: Policy | None = None
        # the supervisor's key this engine trusts (the dashboard pins it at its start);
        # None: the key in the state directory, if any
        self.supervisor_pin: str | None = None

    # -- policies ------------------------------------------------------------------------
    def policy_for(self, state: LoopState) -> Policy:
        if state.policy == "llm":
            return LlmPolicy(self.settings, self.tools, rules=rules_text(), client=self.llm_client)
        return OfflinePolicy(self.tools, state.goal.script, state.goal.goal)

    # -- creating ----------------------------------------------------------------------------
    def create(self, goal: GoalFrame, policy: str = "offline") -> LoopState:
        if policy not in ("offline", "llm"):
            raise BadQuery(f"unknown policy {policy!r}: choose offline or llm")
        state = LoopState(loop_id=new_loop_id(), goal_id=goal.goal_id, goal=goal, policy=policy,  # type: ignore[arg-type]
                          budget=goal.budget)
        try:
            self.policy_for(state)  # fail now, not mid-run, when the LLM is not configured
        except PolicyError as exc:
            raise BadQuery(str(exc)) from None
        return self._commit(None, state, "created", f"goal {goal.goal_id!r} with the {policy} policy")

    def fork(self, loop_id: str, at: int) -> LoopState:
        """A new loop that starts from history entry ``at`` of ``loop_id``;
        the original's files are only read."""
        entries, _ = self.store.history(loop_id)
        entry = next((e for e in entries if e.index == at), None)
        if entry is None:
            have = _ranges([e.index for e in entries])
            raise BadQuery(f"loop {loop_id} has no history entry {at} (entries: {have or 'none'}; "
                           "older ones may have been dropped by retention)")
        if entry.state.status in TERMINAL:
            raise BadQuery(f"entry {at} of loop {loop_id} is {entry.state.status}: fork from an entry before "
                           "the loop ended (ars loop history shows them)")
        src = entry.state
        # A decision belongs to one request of one loop: the fork copies none. It
        # starts unapproved with no decisions; an open request is asked again under
        # a new id (request ids are per loop, and the fork's seq starts again at 1,
        # so a copied id could meet a later request of the fork); a fork taken
        # between an approval and its action goes back to decide, so the action
        # waits for a person again. Answers stay: they are what a person said,
        # not a permission.
        update: dict[str, Any] = {
            "loop_id": new_loop_id(), "parent": ParentRef(loop_id=loop_id, index=at), "seq": 0,
            "ledger_mark": 0, "created_at": now(), "elapsed_s": 0.0, "approved": False, "decisions": [],
        }
        pending = src.pending_approval
        if pending is not None:
            update["pending_approval"] = pending.model_copy(update={"request_id": "req-1", "created_at": now()})
        a = src.selected_action
        if src.current_step == "act" and a is not None and (self.tools.is_risky(a.tool) or a.needs_approval) \
                and src.status == "active":
            update.update({"current_step": "decide", "selected_action": None})
        state = src.model_copy(deep=True, update=update)
        return self._commit(None, state, "forked", f"forked from {loop_id} entry {at}"
                            + (" (its approval is not copied: the action waits for a person again)"
                               if src.approved else ""),
                            {"parent": {"loop_id": loop_id, "index": at}})

    # -- running ---------------------------------------------------------------------------------
    def run(self, loop_id: str) -> LoopState:
        """Run a loop from its checkpoint until it exits (or waits for a person)."""
        self.store.load(loop_id)  # an unknown id is bad input before any lock file is made
        with self.store.lock(loop_id):
            state = self.recover(loop_id)
            if state.status in TERMINAL:
                return state
            repair = getattr(self.memory, "recover", None)
            if callable(repair):
                repair()  # a kill between a memory ledger append and its SQLite commit
            try:
                self._policy = self.policy_for(state)
            except PolicyError as exc:
                raise BadQuery(f"loop {loop_id} uses the {state.policy} policy, and {exc}; "
                               "any recorded decision applies when it resumes") from None
            self._mark = time.monotonic()
            if state.status in ("waiting_human", "blocked"):
                try:
                    decision = find_decision(self.state_dir, state)
                except CorruptDecision:
                    assert state.pending_approval is not None
                    decision, line = settle_corrupt(self.state_dir, loop_id, state.pending_approval.request_id)
                    self.warnings.append(line)
                if decision is None:
                    return state
                state = self._apply(state, decision)
            if state.status == "initialized":
                state = self._commit(state, state.model_copy(update={"status": "active", "iteration": 1}),
                                     "status", "started")
            while state.status == "active":
                state = self._step(state)
            return state

    def cancel(self, loop_id: str, reason: str) -> LoopState:
        self.store.load(loop_id)
        with self.store.lock(loop_id):
            state = self.recover(loop_id)
            if state.status in TERMINAL:
                raise BadQuery(f"loop {loop_id} is already {state.status}; nothing to cancel")
            self._mark = time.monotonic()
            return self._commit(state, state.model_copy(update={
                "status": "aborted", "exit_reason": f"cancelled: {reason}", "pending_approval": None,
                "needs_human_input": False}), "status", f"cancelled: {reason}")

    def recover(self, loop_id: str) -> LoopState:
        """The loop's state, rolled forward to its history when a crash left the
        checkpoint behind; re-emits a missing ledger event and rewrites the checkpoint."""
        loaded: Loaded = self.store.load(loop_id)
        self.warnings.extend(loaded.warnings)
        state = loaded.state
        if loaded.recovered:
            entry = last_entry(self.store.history_path(state))
            if entry is not None:
                state = state.model_copy(update={"ledger_mark": self._append_once([self._event(entry)],
                                                                                   state.ledger_mark)})
            self.store.save(state)
        return state

    # -- commits ------------------------------------------------------------------------------------
    def _event(self, entry: HistoryEntry) -> Event:
        s = entry.state
        return Event(content_id(LOOP_TRANSITION_EVENT, s.loop_id, entry.index), LOOP_TRANSITION_EVENT, {
            "loop_id": s.loop_id, "goal_id": s.goal_id, "seq": entry.index, "kind": entry.kind,
            "from_status": entry.from_status, "to_status": entry.to_status, "from_step": entry.from_step,
            "to_step": entry.to_step, "iteration": entry.iteration, "reason": entry.reason,
        }, ts=entry.ts.isoformat())

    def _append_once(self, events: list[Event], mark: int) -> int:
        """Append the events the ledger does not hold yet (looking from ``mark``);
        returns the ledger offset after them."""
        size = self.ledger.size()
        start = mark if 0 <= mark <= size else 0
        have = {e.event_id for e in self.ledger.read(start)} if start < size else set()
        todo = [e for e in events if e.event_id not in have]
        if todo:
            return self.ledger.append(todo)[1]
        return size

    def _commit(self, old: LoopState | None, new: LoopState, kind: str, reason: str = "",
                detail: dict[str, Any] | None = None) -> LoopState:
        if old is not None:
            validate_transition(old.status, new.status, old.current_step, new.current_step)
        t = time.monotonic()
        new = new.model_copy(update={
            "seq": (old.seq if old is not None else 0) + 1,
            "updated_at": now(),
            "elapsed_s": (old.elapsed_s if old is not None else new.elapsed_s) + (t - self._mark if old else 0.0),
        })
        self._mark = t
        entry = HistoryEntry(index=new.seq, kind=kind, from_status=old.status if old else None,  # type: ignore[arg-type]
                             to_status=new.status, from_step=old.current_step if old else None,
                             to_step=new.current_step, iteration=new.iteration, reason=reason,
                             detail=detail or {}, state=new)
        self.store.append(entry)
        _crash("after_history", old or new)
        mark = self._append_once([self._event(entry)], new.ledger_mark)
        new = new.model_copy(update={"ledger_mark": mark})
        _crash("after_ledger", old or new)
        self.store.save(new)
        asked = new.pending_approval
        if asked is not None and (old is None or old.pending_approval is None
                                  or old.pending_approval.request_id != asked.request_id):
            from core.inbox.loops import from_pending
            from core.inbox.notify import announce

            req = from_pending(new)
            if req is not None:
                announce(self.state_dir, req)  # the supervisor is told wherever they are (a detached sender)
        return new

    # -- the steps ----------------------------------------------------------------------------------
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
        _crash("tool", state)
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
        _crash("record_ledger", state)
        if not self._stored(episode):  # a replayed record step stores nothing twice
            self.memory.store([episode])
        _crash("record_memory", state)

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

    # -- people ---------------------------------------------------------------------------------------
    def _apply(self, state: LoopState, d: Decision) -> LoopState:
        """Resume a waiting or blocked loop with a person's decision."""
        assert self._policy is not None
        p = state.pending_approval
        assert p is not None and p.request_id == d.request_id
        if d.kind in ("approve", "edit"):
            from core.loop.decisions import verify

            why = verify(self.state_dir, p, d, self.supervisor_pin)
            if why:  # never act on it: the approval is taken as a refusal, and said loudly
                line = f"loop {state.loop_id}: the approval of {d.request_id} was refused: {why}"
                self.warnings.append(line)
                d = d.model_copy(update={"kind": "reject", "note": f"approval refused: {why}",
                                         "args": None})
        mark = self._append_once([record_decision_event(d)], state.ledger_mark)
        common: dict[str, Any] = {"pending_approval": None, "needs_human_input": False, "ledger_mark": mark,
                                  "decisions": [*state.decisions, d]}
        detail = {"decision": d.model_dump(mode="json")}
        who = f" ({d.decided_by})" if d.decided_by else ""
        if d.kind in ("approve", "edit"):
            assert p.action is not None
            action = p.action if d.kind == "approve" else p.action.model_copy(update={"args": d.args or {}})
            reason = (f"approved{who}" if d.kind == "approve"
                      else f"edited and approved{who}: args {d.original_args} -> {d.args}") + \
                (f": {d.note}" if d.note else "")
            return self._commit(state, state.model_copy(update={
                **common, "status": "active", "current_step": "act", "selected_action": action,
                "approved": True}), "decision", reason, detail)
        if d.kind == "respond":
            if p.kind == "unblock":
                nxt = state.iteration + 1
                # unblocking at the last allowed iteration grants exactly one more, and says so
                extra = nxt > state.budget.max_iterations
                reason = f"unblocked{who}: {d.note}" + (f" (iteration budget raised to {nxt})" if extra else "")
                return self._commit(state, state.model_copy(update={
                    **common, "status": "active", "current_step": "observe", "iteration": nxt,
                    "consecutive_failures": 0, "blockers": [], "exit_reason": "",
                    "next_iteration_hint": f"a person said: {d.note}",
                    "budget": state.budget.model_copy(update={"max_iterations": max(state.budget.max_iterations,
                                                                                    nxt)}),
                    "answers": [*state.answers, Answer(request_id=p.request_id, question=p.prompt,
                                                       answer=d.note, iteration=nxt)]}),
                    "decision", reason, detail)
            return self._commit(state, state.model_copy(update={
                **common, "status": "active",
                "open_questions": [q for q in state.open_questions if q != p.prompt],
                "answers": [*state.answers, Answer(request_id=p.request_id, question=p.prompt, answer=d.note,
                                                   iteration=state.iteration)]}),
                "decision", f"answered{who}: {d.note}", detail)
        # reject
        if p.kind == "unblock":
            why = f"a person declined to unblock: {d.note}"
            return self._commit(state, state.model_copy(update={**common, "status": "aborted", "exit_reason": why}),
                                "decision", why, detail)
        follow = self._policy.on_reject(state, d.note)
        # the rejected iteration is recorded like any other; the plan's choice applies after it
        return self._commit(state, state.model_copy(update={
            **common, "status": "active", "current_step": "record", "approved": False,
            "exit_after_record": None if follow == "skip" else follow,
            "open_questions": [q for q in state.open_questions if q != p.prompt],
            "verification_result": Verification(outcome="fail", reason=f"rejected by a person: {d.note}")}),
            "decision", f"rejected{who}: {d.note} (the plan: {follow})", detail)

def _ranges(nums: list[int]) -> str:
    if not nums:
        return ""
    out, start, prev = [], nums[0], nums[0]
    for n in nums[1:] + [None]:  # type: ignore[list-item]
        if n is not None and n == prev + 1:
            prev = n
            continue
        out.append(f"{start}-{prev}" if start != prev else f"{start}")
        if n is not None:
            start = prev = n
    return ", ".join(out)
