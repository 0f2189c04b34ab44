"""The OODA engine: observe -> orient -> decide -> act -> verify -> record.

A loop moves one transition at a time, each one commit (``transitions``: history
entry, ledger event, checkpoint), through the six steps of an iteration
(``steps``: observe, orient, decide, act, verify, record, and the exits they
lead to). This module holds the ``Engine`` itself: creating and forking loops,
running one from its checkpoint (recovering what a crash left), cancelling, and
resuming with a person's decision.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

from core.config import Settings
from core.ledger.ledger import Ledger
from core.errors import BadQuery
from core.loop import checker
from core.loop.checkpoints import CheckpointStore, Loaded
from core.loop.history_file import last_entry
from core.loop.decisions import CorruptDecision, find_decision, record_decision_event, settle_corrupt
from core.loop.models import TERMINAL, Answer, Decision, GoalFrame, LoopState, ParentRef, Verification, now
from core.loop.policies.llm import LlmPolicy
from core.loop.policies.offline import OfflinePolicy
from core.loop.policies.protocol import Policy, PolicyError
from core.loop.steps import Steps
from core.loop.tools import ToolRegistry, default_registry


def new_loop_id() -> str:
    return f"loop-{uuid.uuid4().hex[:12]}"


def rules_text() -> str:
    soul = checker.load_soul()
    return "\n".join(f"{i}. {soul.titles[r]}" for i, r in enumerate(checker.RULES, 1))


class Engine(Steps):
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
