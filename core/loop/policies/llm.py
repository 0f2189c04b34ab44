"""The LLM policy: an OpenAI-compatible chat model through tool calls: ``orient``
(premises with sources, hypotheses citing them), then one of the registered tools
(or ``ask_human``) with a rationale citing ids, then ``verify``. When the
first-principles check fails, the failure is sent back once and the revised
answer is used (both are recorded)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from core.config import Settings
from core.loop.goals import MAX_DEPTH, json_depth
from core.loop.models import CheckRecord, Hypothesis, LoopState, Premise, ProposedAction, Verification
from core.loop.policies.protocol import (SOURCES, CheckDecision, CheckOrientation, Choice, Judgement, OnReject,
                                         Orientation, PolicyError, known_ids)
from core.loop.tools import ToolRegistry

SYSTEM = """You are the reasoning core of an autonomous work loop (observe, orient, decide, act, verify, record).
Follow the four first-principles rules of SOUL.md:
{rules}
Premises name their source (observed, recalled, given, assumed, human); hypotheses cite premise ids;
every action's rationale cites the ids it rests on. Never write vague certainty words such as
"obviously", "clearly", "显然", "肯定". Answer only through the function you are given."""

ORIENT_FN = {
    "type": "function",
    "function": {
        "name": "orient",
        "description": "State the premises (with their source) and the hypotheses (citing premise ids).",
        "parameters": {
            "type": "object",
            "properties": {
                "premises": {"type": "array", "items": {"type": "object", "properties": {
                    "id": {"type": "string"}, "text": {"type": "string"},
                    "source": {"type": "string", "enum": list(SOURCES)}, "ref": {"type": "string"}},
                    "required": ["id", "text", "source"]}},
                "hypotheses": {"type": "array", "items": {"type": "object", "properties": {
                    "id": {"type": "string"}, "text": {"type": "string"},
                    "because": {"type": "array", "items": {"type": "string"}}},
                    "required": ["id", "text", "because"]}},
            },
            "required": ["premises", "hypotheses"],
        },
    },
}
ASK_FN = {
    "type": "function",
    "function": {
        "name": "ask_human",
        "description": "Ask the person supervising the loop a question; the loop waits for the answer.",
        "parameters": {"type": "object", "properties": {
            "question": {"type": "string"}, "rationale": {"type": "string"},
            "because": {"type": "array", "items": {"type": "string"}}},
            "required": ["question", "rationale", "because"]},
    },
}
VERIFY_FN = {
    "type": "function",
    "function": {
        "name": "verify",
        "description": "Judge the action's result: pass, fail or unknown; say whether the goal is now done.",
        "parameters": {"type": "object", "properties": {
            "outcome": {"type": "string", "enum": ["pass", "fail", "unknown"]},
            "reason": {"type": "string"},
            "goal_done": {"type": "boolean"}},
            "required": ["outcome", "reason", "goal_done"]},
    },
}


class LlmPolicy:
    name = "llm"

    def __init__(self, settings: Settings, tools: ToolRegistry, rules: str = "", client: Any = None):
        if client is None and not settings.openai_base_url and not settings.openai_api_key:
            raise PolicyError("the LLM policy needs a model: set ARS_OPENAI_BASE_URL (a local server) "
                              "or OPENAI_API_KEY")
        self.settings = settings
        self.tools = tools
        self.rules = rules
        self._client = client

    @property
    def client(self) -> Any:
        if self._client is None:
            from openai import OpenAI  # imported here: `ars check` and the offline loop never load it

            key = self.settings.openai_api_key.get_secret_value() if self.settings.openai_api_key else "not-needed"
            self._client = OpenAI(base_url=self.settings.openai_base_url or None, api_key=key,
                                  timeout=60.0, max_retries=1)
        return self._client

    # the loop never runs out of script; it ends on done, blocked or budget
    def exhausted(self, state: LoopState) -> bool:
        return False

    def advance(self, state: LoopState) -> dict[str, Any]:
        return {}

    def on_reject(self, state: LoopState, reason: str) -> OnReject:
        return "skip"  # the rejection is in the context of the next decide

    # -- the conversation ----------------------------------------------------------------
    def _context(self, state: LoopState, *, with_orientation: bool = False, with_result: bool = False) -> str:
        g = state.goal
        lines = [f"Goal: {g.goal}"]
        if g.success_criteria:
            lines.append("Success criteria: " + "; ".join(g.success_criteria))
        if g.constraints:
            lines.append("Constraints: " + "; ".join(g.constraints))
        lines.append(f"Iteration {state.iteration} of at most {state.budget.max_iterations}; "
                     f"consecutive failures {state.consecutive_failures} of {state.budget.max_consecutive_failures}.")
        if state.observation is not None:
            lines.append("Observation: " + state.observation.summary())
        for r in state.iterations[-5:]:
            act = f"{r.action.tool} {json.dumps(r.action.args, ensure_ascii=False)}" if r.action else "no action"
            ver = f"{r.verification.outcome} ({r.verification.reason})" if r.verification else "not verified"
            extra = f"; person: {r.decision}" if r.decision else ""
            lines.append(f"Iteration {r.iteration}: {act} -> {ver}{extra}")
        for a in state.answers[-5:]:
            lines.append(f"A person answered “{a.question}”: {a.answer}")
        if with_orientation:
            lines.append("Premises: " + "; ".join(f"{p.id} [{p.source}] {p.text}" for p in state.premises))
            lines.append("Hypotheses: " + "; ".join(f"{h.id} {h.text} (because {', '.join(h.because)})"
                                                    for h in state.working_hypotheses))
        if with_result and state.selected_action is not None:
            a = state.selected_action
            lines.append(f"Action taken: {a.tool} {json.dumps(a.args, ensure_ascii=False)}")
            r = state.action_result
            if r is not None:
                lines.append(f"Result: ok={r.ok} error={r.error!r}\n{r.output[:2000]}")
        return "\n".join(lines)

    def _call(self, messages: list[dict], tools: list[dict], choice: Any) -> tuple[dict, int, dict]:
        try:
            resp = self.client.chat.completions.create(model=self.settings.openai_model, messages=messages,
                                                       tools=tools, tool_choice=choice)
        except Exception as exc:  # noqa: BLE001 - any client failure ends this iteration as failed
            raise PolicyError(f"model call failed: {' '.join(str(exc).split())[:200]}") from None
        tokens = int(getattr(getattr(resp, "usage", None), "total_tokens", 0) or 0)
        msg = resp.choices[0].message
        calls = msg.tool_calls or []
        if not calls:
            raise PolicyError("the model answered without a tool call")
        call = calls[0]
        too_deep = False
        try:
            args = json.loads(call.function.arguments or "{}")
        except RecursionError:
            args, too_deep = None, True  # nested past the parser's limit
        except ValueError as exc:
            raise PolicyError(f"the model's arguments for {call.function.name} are not JSON: {exc}") from None
        if too_deep or json_depth(args) > MAX_DEPTH:
            raise PolicyError(f"the model's arguments for {call.function.name} nest more than {MAX_DEPTH} deep")
        if not isinstance(args, dict):
            raise PolicyError(f"the model's arguments for {call.function.name} are not an object")
        assistant = {"role": "assistant", "content": msg.content or "",
                     "tool_calls": [{"id": call.id, "type": "function",
                                     "function": {"name": call.function.name, "arguments": call.function.arguments}}]}
        return {"name": call.function.name, "args": args, "id": call.id}, tokens, assistant

    def _messages(self, user: str) -> list[dict]:
        return [{"role": "system", "content": SYSTEM.format(rules=self.rules or "(see SOUL.md)")},
                {"role": "user", "content": user}]

    @staticmethod
    def _send_back(messages: list[dict], assistant: dict, call_id: str, feedback: str, fn: str) -> list[dict]:
        return [*messages, assistant,
                {"role": "tool", "tool_call_id": call_id,
                 "content": f"First-principles check failed:\n{feedback}\nRevise your answer and call {fn} again."}]

    def orient(self, state: LoopState, check: CheckOrientation) -> Orientation:
        messages = self._messages(self._context(state) + "\n\nOrient: call orient with premises and hypotheses.")
        choice = {"type": "function", "function": {"name": "orient"}}
        checks: list[CheckRecord] = []
        tokens = 0
        for revision in (0, 1):
            call, used, assistant = self._call(messages, [ORIENT_FN], choice)
            tokens += used
            try:
                premises = [Premise.model_validate(p) for p in call["args"].get("premises", [])]
                hyps = [Hypothesis.model_validate(h) for h in call["args"].get("hypotheses", [])]
            except ValidationError as exc:
                raise PolicyError(f"malformed orient answer: {' '.join(str(exc).split())[:200]}") from None
            results = check(premises, hyps)
            checks += [CheckRecord(step="orient", result=r, revision=revision) for r in results]
            failed = [r for r in results if not r.passed]
            if not failed or revision == 1:
                return Orientation(premises=premises, hypotheses=hyps, checks=checks, tokens=tokens)
            messages = self._send_back(messages, assistant, call["id"], "\n".join(r.feedback() for r in failed),
                                       "orient")
        raise AssertionError("unreachable")

    def decide(self, state: LoopState, check: CheckDecision) -> Choice:
        messages = self._messages(self._context(state, with_orientation=True)
                                  + "\n\nDecide: call exactly one tool (or ask_human), with a rationale citing ids.")
        tools = [*self.tools.openai_tools(), ASK_FN]
        checks: list[CheckRecord] = []
        tokens = 0
        for revision in (0, 1):
            call, used, assistant = self._call(messages, tools, "required")
            tokens += used
            args = dict(call["args"])
            rationale = str(args.pop("rationale", "") or "")
            because = [str(b) for b in (args.pop("because", []) or [])]
            name = call["name"]
            question = None
            if name == "ask_human":
                question = str(args.get("question", "")).strip() or None
                if question is None:
                    raise PolicyError("the model asked an empty question")
                action = ProposedAction(tool="ask_human", args={}, description=f"ask: {question}",
                                        rationale=rationale, because=because)
            else:
                if name not in self.tools or not self.tools.get(name).for_llm:
                    raise PolicyError(f"the model chose {name!r}, which is not a registered tool")
                action = ProposedAction(tool=name, args=args, rationale=rationale, because=because,
                                        description=f"{name} {json.dumps(args, ensure_ascii=False)}")
            result = check(action, known_ids(state))
            checks.append(CheckRecord(step="decide", result=result, revision=revision))
            if result.passed or revision == 1:
                if question is not None:
                    return Choice(action=None, question=question, checks=checks, tokens=tokens)
                return Choice(action=action, checks=checks, tokens=tokens)
            messages = self._send_back(messages, assistant, call["id"], result.feedback(), "a tool")
        raise AssertionError("unreachable")

    def verify(self, state: LoopState) -> Judgement:
        messages = self._messages(self._context(state, with_orientation=True, with_result=True)
                                  + "\n\nVerify: call verify with pass, fail or unknown and say if the goal is done.")
        call, tokens, _ = self._call(messages, [VERIFY_FN], {"type": "function", "function": {"name": "verify"}})
        a = call["args"]
        outcome = a.get("outcome")
        if outcome not in ("pass", "fail", "unknown"):
            raise PolicyError(f"verify returned outcome {outcome!r}, not pass, fail or unknown")
        return Judgement(verification=Verification(outcome=outcome, reason=str(a.get("reason", "")),
                                                   goal_done=bool(a.get("goal_done")) and outcome == "pass"),
                         tokens=tokens)
