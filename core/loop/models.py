"""The loop's shapes: goal, state, budget, pending approval, history entry,
and the transition table every state change is checked against.

Statuses and steps follow the article (``initialized, active, waiting_human,
blocked, done, aborted``; ``observe, orient, decide, act, verify, record``).
A transition that the table does not allow raises ``IllegalTransition``: the
engine never changes a loop's status silently.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Status = Literal["initialized", "active", "waiting_human", "blocked", "done", "aborted"]
Step = Literal["observe", "orient", "decide", "act", "verify", "record"]
Outcome = Literal["pass", "fail", "unknown"]
Risk = Literal["safe", "risky"]
DecisionKind = Literal["approve", "reject", "edit", "respond"]

STATUSES: tuple[str, ...] = ("initialized", "active", "waiting_human", "blocked", "done", "aborted")
STEPS: tuple[str, ...] = ("observe", "orient", "decide", "act", "verify", "record")
OPEN_STATUSES: tuple[str, ...] = ("active", "blocked", "waiting_human")
TERMINAL: tuple[str, ...] = ("done", "aborted")

# Which status may follow which. ``done`` and ``aborted`` are final: a loop
# that should continue from one of them is forked from an earlier entry.
TRANSITIONS: dict[str, frozenset[str]] = {
    "initialized": frozenset({"active", "aborted"}),
    "active": frozenset({"active", "waiting_human", "blocked", "done", "aborted"}),
    "waiting_human": frozenset({"active", "aborted"}),
    "blocked": frozenset({"active", "aborted"}),
    "done": frozenset(),
    "aborted": frozenset(),
}
# The OODA order; ``record`` closes an iteration and leads to the next observe.
NEXT_STEP: dict[str, str] = {
    "observe": "orient", "orient": "decide", "decide": "act",
    "act": "verify", "verify": "record", "record": "observe",
}


def now() -> datetime:
    return datetime.now(timezone.utc)


class IllegalTransition(ValueError):
    """A status or step change the transition table does not allow."""


def validate_transition(from_status: str, to_status: str, from_step: str, to_step: str) -> None:
    """Raise ``IllegalTransition`` unless the move is allowed.

    * the status pair must be in ``TRANSITIONS`` (or unchanged while active);
    * the step either stays (only together with a status change), moves to the
      next OODA step, or jumps to ``record`` (an iteration that ends early: a
      policy error or a rejected action is still recorded).
    """
    where = f"{from_status}/{from_step} -> {to_status}/{to_step}"
    if to_status not in STATUSES or to_step not in STEPS:
        raise IllegalTransition(f"illegal transition {where}: unknown status or step")
    if from_status != to_status and to_status not in TRANSITIONS.get(from_status, frozenset()):
        raise IllegalTransition(f"illegal transition {where}: {from_status} cannot become {to_status}")
    if from_status == to_status and from_status != "active":
        raise IllegalTransition(f"illegal transition {where}: a {from_status} loop does not step")
    if from_step == to_step:
        if from_status == to_status:
            raise IllegalTransition(f"illegal transition {where}: nothing changes")
        return
    if to_step != NEXT_STEP[from_step] and to_step != "record":
        raise IllegalTransition(f"illegal transition {where}: {from_step} is followed by "
                                f"{NEXT_STEP[from_step]} (or record), not {to_step}")


# -- the first-principles checker's verdicts (shared with checker.py) -------------
RuleId = Literal["decompose", "doubt", "rebuild", "no_skip"]


class Evidence(BaseModel):
    text: str  # the offending span
    start: int = -1  # character offsets in the checked text (-1: structural)
    end: int = -1
    term: str = ""  # the SOUL.md term that matched, if any


class RuleVerdict(BaseModel):
    rule: RuleId
    title: str  # e.g. "拆解到底 — Decompose to atoms"
    verdict: Literal["pass", "fail"]
    reason: str
    evidence: list[Evidence] = Field(default_factory=list)


class CheckResult(BaseModel):
    subject: str = "text"  # "text", "premise P1", "hypothesis H1", "decision"
    text: str
    passed: bool
    verdicts: list[RuleVerdict]
    soul: str = ""  # which SOUL.md the term lists came from

    def failures(self) -> list[RuleVerdict]:
        return [v for v in self.verdicts if v.verdict == "fail"]

    def feedback(self) -> str:
        """What a policy is told when this check fails."""
        lines = []
        for v in self.failures():
            spans = "; ".join(f"“{e.text}”" for e in v.evidence) or "(structure)"
            lines.append(f"{self.subject}: {v.title} failed: {v.reason} Evidence: {spans}")
        return "\n".join(lines)


# -- the goal ----------------------------------------------------------------------
class Budget(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_iterations: int = Field(default=10, ge=1, le=10_000)
    max_consecutive_failures: int = Field(default=3, ge=1, le=1_000)
    max_seconds: float | None = Field(default=None, gt=0)  # wall-clock while running
    max_tokens: int | None = Field(default=None, ge=1)  # LLM tokens (usage.total_tokens)


class ScriptStep(BaseModel):
    """One iteration of the offline policy (DESIGN.md, goal file)."""

    model_config = ConfigDict(extra="forbid")

    action: str = Field(min_length=1)  # what is done (a tool name, or a description)
    outcome: Outcome | None = None  # scripted verification; None: judged from the tool result
    needs_approval: bool = False
    question: str | None = None  # asked of a person before acting
    # extensions (optional): a real tool to run, its arguments, the reasoning
    tool: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)
    premises: list[str] = Field(default_factory=list)  # "observed: ..." / "assumed: ..." / plain
    hypothesis: str | None = None
    reason: str = ""  # why the outcome is what it is (verification note)
    on_reject: Literal["skip", "block", "abort"] = "skip"
    done: bool | None = None  # a pass here completes the goal (default: the last step)


class GoalFrame(BaseModel):
    """What the loop works towards (the article's GoalFrame, plus budget and script)."""

    model_config = ConfigDict(extra="forbid")

    goal_id: str = ""
    name: str = ""
    goal: str = Field(min_length=1)
    success_criteria: list[str] = Field(default_factory=list)
    constraints: list[str] = Field(default_factory=list)
    non_goals: list[str] = Field(default_factory=list)
    risk_level: Literal["low", "medium", "high"] = "low"
    external_side_effects: bool = False
    escalation_points: list[str] = Field(default_factory=list)
    abort_conditions: list[str] = Field(default_factory=list)
    owner: Literal["user", "agent"] = "user"
    created_at: datetime | None = None
    budget: Budget = Field(default_factory=Budget)
    script: list[ScriptStep] | None = None

    @model_validator(mode="before")
    @classmethod
    def _flat_budget(cls, data: Any) -> Any:
        # The article's goal frame carries max_iterations / max_consecutive_failures flat.
        if isinstance(data, dict):
            flat = {k: data[k] for k in ("max_iterations", "max_consecutive_failures", "max_seconds", "max_tokens")
                    if k in data}
            if flat:
                data = {k: v for k, v in data.items() if k not in flat}
                data["budget"] = {**(data.get("budget") or {}), **flat}
        return data

    @field_validator("goal")
    @classmethod
    def _goal_text(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("goal is empty: say what the loop should achieve")
        return v.strip()

    @model_validator(mode="after")
    def _derive_id(self) -> "GoalFrame":
        if not self.goal_id.strip():
            # The article names checkpoints after the goal ("产品调研__loop-abc123.json").
            words = re.sub(r"\s+", "-", self.goal.strip())
            self.goal_id = words[:40].strip("-") or "goal"
        return self


# -- what one iteration produces -----------------------------------------------------
PremiseSource = Literal["observed", "recalled", "given", "assumed", "human"]


class Premise(BaseModel):
    id: str
    text: str
    source: PremiseSource
    ref: str = ""  # an episode id, a tool result, a goal field


class Hypothesis(BaseModel):
    id: str
    text: str
    because: list[str] = Field(default_factory=list)  # premise ids


class ProposedAction(BaseModel):
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    description: str = ""
    rationale: str = ""
    because: list[str] = Field(default_factory=list)  # hypothesis / premise ids
    needs_approval: bool = False  # asked for by the policy, on top of the tool's risk


class ToolResult(BaseModel):
    ok: bool
    output: str = ""
    error: str = ""
    data: dict[str, Any] = Field(default_factory=dict)


class Verification(BaseModel):
    outcome: Outcome
    reason: str = ""
    goal_done: bool = False
    ts: datetime = Field(default_factory=now)


class CheckRecord(BaseModel):
    """One first-principles check made during an iteration."""

    step: Step
    result: CheckResult
    revision: int = 0  # 0: first answer; 1: the answer after the failed check was sent back


class HitBrief(BaseModel):
    episode_id: str
    score: float
    snippet: str = ""


class Observation(BaseModel):
    query: str
    hits: list[HitBrief] = Field(default_factory=list)
    degraded: bool = False
    tiers: dict[str, str] = Field(default_factory=dict)  # tier -> status
    error: str = ""

    def summary(self) -> str:
        if self.error:
            return f"recall failed: {self.error}"
        head = f"recall {self.query[:60]!r}: {len(self.hits)} memories" + (" (degraded)" if self.degraded else "")
        return head + "".join(f"\n- {h.episode_id}: {h.snippet[:120]}" for h in self.hits[:3])


class Answer(BaseModel):
    request_id: str
    question: str
    answer: str
    iteration: int


class IterationRecord(BaseModel):
    iteration: int
    action: ProposedAction | None = None
    result: ToolResult | None = None
    verification: Verification | None = None
    checks_failed: int = 0
    decision: str = ""  # the human decision that shaped it, if any
    episode_id: str = ""


# -- people in the loop --------------------------------------------------------------
class PendingApproval(BaseModel):
    """What the loop asks a person, and what they may answer."""

    request_id: str
    kind: Literal["approval", "question", "unblock"]
    prompt: str  # what is asked
    action: ProposedAction | None = None  # the proposed action, if any
    risk: str = ""  # why approval is needed
    allowed: list[DecisionKind]
    iteration: int
    created_at: datetime = Field(default_factory=now)


class Decision(BaseModel):
    """A person's answer to one pending request (exactly one per request)."""

    loop_id: str
    request_id: str
    kind: DecisionKind
    note: str = ""  # approve/edit note, reject reason, or the response text
    args: dict[str, Any] | None = None  # edit: the new arguments of the proposed action
    original_args: dict[str, Any] | None = None
    iteration: int = 0  # the iteration the request was made in
    decided_at: datetime = Field(default_factory=now)
    decided_by: str = ""  # user@host:pid, or "supervisor <key> (user@host:pid)" when signed
    # The supervisor's signature (core/inbox/signing.py); empty: unverified
    signed: str = ""
    signature: str = ""
    key: str = ""


class ParentRef(BaseModel):
    loop_id: str
    index: int  # the history entry the fork started from


# -- the loop -------------------------------------------------------------------------
class LoopState(BaseModel):
    """The checkpointed state of one loop (the article's LoopState, extended)."""

    loop_id: str
    goal_id: str
    goal: GoalFrame
    policy: Literal["offline", "llm"] = "offline"
    status: Status = "initialized"
    iteration: int = 0  # the iteration in progress (1-based once active)
    current_step: Step = "observe"

    # this iteration's work
    observation: Observation | None = None
    last_observation: str = ""
    premises: list[Premise] = Field(default_factory=list)
    working_hypotheses: list[Hypothesis] = Field(default_factory=list)
    selected_action: ProposedAction | None = None
    approved: bool = False  # a person approved selected_action
    checks: list[CheckRecord] = Field(default_factory=list)
    action_result: ToolResult | None = None
    verification_result: Verification | None = None

    # exits and people
    blockers: list[str] = Field(default_factory=list)
    open_questions: list[str] = Field(default_factory=list)
    needs_human_input: bool = False
    pending_approval: PendingApproval | None = None
    answers: list[Answer] = Field(default_factory=list)
    decisions: list[Decision] = Field(default_factory=list)
    consecutive_failures: int = 0
    last_error: str | None = None
    next_iteration_hint: str | None = None
    exit_reason: str = ""
    exit_after_record: Literal["block", "abort"] | None = None  # a rejection the plan ends on

    # bookkeeping
    budget: Budget = Field(default_factory=Budget)
    tokens_used: int = 0
    elapsed_s: float = 0.0
    cursor: int = 0  # offline policy: the next script step
    iterations: list[IterationRecord] = Field(default_factory=list)  # the last few, newest last
    parent: ParentRef | None = None
    seq: int = 0  # index of the history entry this state is (0: not yet written)
    ledger_mark: int = 0  # ledger byte offset at the last transition (resume scans from here)
    created_at: datetime = Field(default_factory=now)
    updated_at: datetime = Field(default_factory=now)

    @property
    def open(self) -> bool:
        return self.status in OPEN_STATUSES

    def iteration_record(self, n: int) -> IterationRecord | None:
        return next((r for r in self.iterations if r.iteration == n), None)


HistoryKind = Literal["created", "forked", "step", "status", "decision"]


class HistoryEntry(BaseModel):
    """One transition of a loop: what changed, why, and the state after it."""

    index: int
    ts: datetime = Field(default_factory=now)
    kind: HistoryKind
    from_status: Status | None
    to_status: Status
    from_step: Step | None
    to_step: Step
    iteration: int
    reason: str = ""
    detail: dict[str, Any] = Field(default_factory=dict)  # e.g. the RecallResult of an observe
    state: LoopState

    @property
    def status_changed(self) -> bool:
        return self.from_status != self.to_status
