"""What a policy is (the ``Policy`` protocol), what it answers (``Orientation``,
``Choice``, ``Judgement``, ``PolicyError``), and what both policies read from a
loop's state."""

from __future__ import annotations

from typing import Any, Callable, Literal, Protocol

from pydantic import BaseModel, Field

from core.loop.models import CheckRecord, CheckResult, Hypothesis, LoopState, Premise, ProposedAction, Verification

OnReject = Literal["skip", "block", "abort"]
CheckOrientation = Callable[[list[Premise], list[Hypothesis]], list[CheckResult]]
CheckDecision = Callable[[ProposedAction, list[str]], CheckResult]


class PolicyError(RuntimeError):
    """The policy could not produce an answer (model down, malformed reply...)."""


class Orientation(BaseModel):
    premises: list[Premise]
    hypotheses: list[Hypothesis]
    checks: list[CheckRecord] = Field(default_factory=list)
    tokens: int = 0


class Choice(BaseModel):
    action: ProposedAction | None = None
    question: str | None = None
    checks: list[CheckRecord] = Field(default_factory=list)
    tokens: int = 0


class Judgement(BaseModel):
    verification: Verification
    tokens: int = 0


class Policy(Protocol):
    name: str

    def orient(self, state: LoopState, check: CheckOrientation) -> Orientation: ...

    def decide(self, state: LoopState, check: CheckDecision) -> Choice: ...

    def verify(self, state: LoopState) -> Judgement: ...

    def on_reject(self, state: LoopState, reason: str) -> OnReject: ...

    def advance(self, state: LoopState) -> dict[str, Any]: ...

    def exhausted(self, state: LoopState) -> bool: ...


def answer_now(state: LoopState) -> str | None:
    for a in reversed(state.answers):
        if a.iteration == state.iteration:
            return a.answer
    return None


def known_ids(state: LoopState) -> list[str]:
    return [p.id for p in state.premises] + [h.id for h in state.working_hypotheses]


# Where a premise may come from (the offline policy's script names them; the LLM's schema lists them).
SOURCES = ("observed", "recalled", "given", "assumed", "human")
