"""The offline policy: the goal file's ``script``, one step an iteration
(deterministic, for the tests and the demo); a goal with no script gets a
two-step plan that is honest about what it cannot do: recall what memory holds
about the goal, then ask a person what to do."""

from __future__ import annotations

from typing import Any

from core.loop.models import CheckRecord, Hypothesis, LoopState, Premise, ProposedAction, ScriptStep, Verification
from core.loop.policies.protocol import (SOURCES, CheckDecision, CheckOrientation, Choice, Judgement, OnReject,
                                         Orientation, PolicyError, answer_now, known_ids)
from core.loop.tools import ANSWER, ToolRegistry, UnsafeTemplate, fill_shell


def default_script(goal: str) -> list[ScriptStep]:
    return [
        ScriptStep(action="recall what memory holds about the goal", tool="recall", args={"query": goal},
                   premises=["given: the goal has no script, so the offline policy has no plan of its own"],
                   done=False),
        ScriptStep(action="record the plan a person gives", tool="note",
                   args={"text": f"Plan for '{goal}' from a person: {{answer}}"},
                   question="The offline policy has no script for this goal. What should the loop do? "
                            "(Your answer is stored as a note; to act on it, run a goal file with a script "
                            "or --policy llm.)",
                   done=False),
    ]


def _fill(value: Any, answer: str | None) -> Any:
    if isinstance(value, str) and answer is not None:
        return value.replace(ANSWER, answer)
    if isinstance(value, dict):
        return {k: _fill(v, answer) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, answer) for v in value]
    return value


def fill_args(args: dict[str, Any], answer: str | None, shell_args: tuple[str, ...] = ()) -> dict[str, Any]:
    """A step's arguments with ``{answer}`` replaced by a person's answer: as
    plain text, except in the arguments a shell parses, where it is quoted
    (``tools.fill_shell``), so an answer is never run as a command."""
    out: dict[str, Any] = {}
    for k, v in args.items():
        if k in shell_args and isinstance(v, str) and answer is not None:
            try:
                out[k] = fill_shell(v, answer)
            except UnsafeTemplate as exc:
                raise PolicyError(f"argument {k!r}: {exc}") from None
        else:
            out[k] = _fill(v, answer)
    return out


class OfflinePolicy:
    name = "offline"

    def __init__(self, tools: ToolRegistry, script: list[ScriptStep] | None, goal: str):
        self.tools = tools
        self.script = list(script) if script else default_script(goal)

    def step(self, state: LoopState) -> ScriptStep:
        if state.cursor >= len(self.script):
            raise PolicyError(f"the script has no step {state.cursor + 1} (it has {len(self.script)})")
        return self.script[state.cursor]

    def exhausted(self, state: LoopState) -> bool:
        return state.cursor >= len(self.script)

    def advance(self, state: LoopState) -> dict[str, Any]:
        return {"cursor": state.cursor + 1}

    def on_reject(self, state: LoopState, reason: str) -> OnReject:
        return self.step(state).on_reject

    def _tool(self, s: ScriptStep) -> str:
        if s.tool:
            return s.tool
        if s.action in self.tools and s.action not in ("scripted", "finish"):
            return s.action
        return "scripted"

    def orient(self, state: LoopState, check: CheckOrientation) -> Orientation:
        s = self.step(state)
        premises: list[Premise] = []

        def add(text: str, source: str, ref: str = "") -> None:
            premises.append(Premise(id=f"P{len(premises) + 1}", text=text, source=source, ref=ref))  # type: ignore[arg-type]

        add(f"the goal is: {state.goal.goal}", "given", "goal")
        obs = state.observation
        if obs is not None and not obs.error:
            top = obs.hits[0].episode_id if obs.hits else ""
            add(f"recall returned {len(obs.hits)} memories for the goal" + (f", the first {top}" if top else ""),
                "recalled", top)
        elif obs is not None:
            add(f"recall could not answer: {obs.error}", "observed", "recall")
        for a in state.answers:
            if a.iteration == state.iteration:
                add(f"a person answered “{a.question}” with “{a.answer}”", "human", a.request_id)
        if state.next_iteration_hint:
            add(f"the previous iteration left this note: {state.next_iteration_hint}", "observed", "record")
        for raw in s.premises:
            head, sep, rest = raw.partition(":")
            if sep and head.strip().lower() in SOURCES:
                add(rest.strip(), head.strip().lower())
            else:
                add(raw.strip(), "assumed")
        ids = [p.id for p in premises]
        text = s.hypothesis or (f"doing “{s.action}” is the next step towards the goal, "
                                f"because it is step {state.cursor + 1} of {len(self.script)} of the plan")
        hyps = [Hypothesis(id="H1", text=text, because=ids)]
        checks = [CheckRecord(step="orient", result=r) for r in check(premises, hyps)]
        return Orientation(premises=premises, hypotheses=hyps, checks=checks)

    def decide(self, state: LoopState, check: CheckDecision) -> Choice:
        s = self.step(state)
        answer = answer_now(state)
        tool = self._tool(s)
        shell_args = self.tools.get(tool).shell_args if tool in self.tools else ()
        args = fill_args(dict(s.args), answer, shell_args) if tool != "scripted" else {"action": s.action, **s.args}
        action = ProposedAction(tool=tool, args=args, description=s.action, needs_approval=s.needs_approval,
                                rationale=f"Because H1 holds, the next step is “{s.action}” ({tool}).",
                                because=["H1"])
        checks = [CheckRecord(step="decide", result=check(action, known_ids(state)))]
        if s.question and answer is None:
            return Choice(action=action, question=s.question, checks=checks)
        return Choice(action=action, checks=checks)

    def verify(self, state: LoopState) -> Judgement:
        s = self.step(state)
        result = state.action_result
        last = s.done if s.done is not None else state.cursor == len(self.script) - 1
        if result is None or not result.ok:
            why = (result.error if result else "") or "the action did not run"
            return Judgement(verification=Verification(outcome="fail", reason=s.reason or why))
        scripted = bool(result.data.get("scripted"))
        outcome = s.outcome or ("unknown" if scripted else "pass")
        reason = s.reason or (f"scripted outcome of “{s.action}”" if s.outcome
                              else "nothing checks a scripted action" if scripted
                              else f"{state.selected_action.tool if state.selected_action else 'tool'} succeeded")
        return Judgement(verification=Verification(outcome=outcome, reason=reason,
                                                   goal_done=outcome == "pass" and last))
