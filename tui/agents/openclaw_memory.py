"""ARS's memory in OpenClaw's turns, answered inside ``ars hook openclaw --serve``
(tui/agents/openclaw.py) for the plugin (tui/agents/openclaw_plugin/):

* ``context``: what a turn is given (``before_prompt_build``): ``ARS.context``
  with the user's message, the turn before it, the session and the agent;
* ``capture``: the turn as it ended (``agent_end``): ``ARS.capture_turn``,
  durable when it answers;
* ``outcome``: how a call the supervisor decided on then ran (``after_tool_call``);
* ``search`` / ``get``: the memory tools (``memory_search``, ``memory_get``)
  when ARS holds OpenClaw's memory slot, compact and bounded
  (tui/agents/memory_answer.py);
* ``startup``: the session's first turn, what waits for the supervisor.

One ARS is kept open (``Keeper``) and in step with the state directory, as the
recall daemon keeps its own (tui/daemon/server.py): a store replaced under it is
reopened, ledger events other processes wrote are applied before each answer.
Every answer is a dict; nothing here raises to the caller except on a bug
(the serve loop turns any exception into ``{"error"}``, and the plugin injects
nothing). A prompt the recall cannot take (huge, binary, lone surrogates) is
cleaned and cut, and says so in ``warn`` (one line in OpenClaw's log).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Callable

from tui.agents import memory_answer

AGENT = "openclaw"
PROMPT_LIMIT = 8_000      # characters of the user's message used as the recall query
PREVIOUS_LIMIT = 2_000    # characters of the turn before it
CAPTURE_LIMIT = 200_000   # characters of one turn's text kept for capture (each part is cut further by core)
TOOL_OUTPUT_LIMIT = 4_000  # characters of one tool call's output in a captured turn
DEADLINE_SHARE = 0.8      # of the plugin's wait left for core's own recall deadline (the rest: the pipes)


def _file_id(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


class Keeper:
    """One ARS for the serve process, opened on first use (or by ``warm``)."""

    def __init__(self, state: str, say: Callable[[str], None]):
        self.state = Path(state)
        self.say = say
        self._ars = None
        self._store_id: tuple[int, int] | None = None

    def ars(self):
        """The open ARS, in step with the state directory; None when there is none yet."""
        if not self.state.is_dir():
            return None
        if self._ars is not None and _file_id(self.state / "memory.sqlite") != self._store_id:
            self.close()  # replaced under us (ars rebuild): read the new file, as a new process would
        if self._ars is None:
            os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
            from core.api import ARS, load_settings

            self._ars = ARS(load_settings(state_dir=str(self.state)), create=False)
            self._store_id = _file_id(self.state / "memory.sqlite")
        else:
            self._ars.refresh()  # what other processes wrote (ars ingest, the inbox, another agent's capture)
        return self._ars

    def warm(self) -> None:
        """Pay the imports, a first recall and the per-turn context's set-up before the first turn asks."""
        ars = self.ars()
        if ars is None:
            return
        ars.warm(deadline=5.0, rounds=2)
        prepare = getattr(ars, "context_prepare", None)
        if prepare is not None:
            prepare()

    def close(self) -> None:
        if self._ars is not None:
            try:
                self._ars.close()
            finally:
                self._ars = None


# -- the input: what OpenClaw sent, made safe for the recall --------------------------------------
def clean(value: Any, limit: int) -> tuple[str, str]:
    """(text, problem): a string with no lone surrogate or NUL, at most ``limit`` characters."""
    if value is None:
        return "", ""
    if not isinstance(value, str):
        return "", f"not text ({type(value).__name__})"
    problem = ""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        value = value.encode("utf-8", "replace").decode("utf-8")
        problem = "it held characters that are not Unicode text (replaced)"
    if "\x00" in value:
        value = value.replace("\x00", " ")
        problem = problem or "it held NUL bytes (replaced)"
    if len(value) > limit:
        problem = (problem + "; " if problem else "") + f"{len(value):,} characters, the first {limit:,} used"
        value = value[:limit]
    return value, problem


def _unavailable(what: str) -> str:
    return (f"this ARS has no {what} yet (an older core): nothing done; update ARS (`pip install -U` where "
            "it is installed)")


# -- the turn: recall in -------------------------------------------------------------------------
def context(keeper: Keeper, req: dict) -> dict:
    """What this turn is given: ``{"text", "memories", "latency_ms", "note"}`` (and ``warn``)."""
    started = time.perf_counter()
    prompt, bad = clean(req.get("prompt"), PROMPT_LIMIT)
    previous, _ = clean(req.get("previous"), PREVIOUS_LIMIT)
    answer: dict = {"text": "", "memories": [], "latency_ms": 0.0, "note": ""}
    if bad:
        answer["warn"] = f"the prompt: {bad}"
    if not prompt.strip():
        answer["note"] = "no text in the user's message: nothing recalled"
        return answer
    ars = keeper.ars()
    if ars is None:
        answer["note"] = f"no ARS state directory at {keeper.state}: nothing recalled"
        return answer
    fn = getattr(ars, "context", None)
    if fn is None:
        answer["note"] = _unavailable("per-turn context (ARS.context)")
        return answer
    budget = req.get("budget")
    extra = {}
    left = req.get("left_s")  # what is left of the plugin's wait (openclaw_serve.py)
    if _number(left) and _takes(fn, "deadline"):  # core's own deadline, inside it
        extra["deadline"] = max(0.05, float(left) * DEADLINE_SHARE)
    got = fn(prompt, session=_text(req.get("session")) or None, agent=AGENT, previous=previous or None,
             budget=budget if isinstance(budget, int) and not isinstance(budget, bool) and budget > 0 else None,
             turn=_text(req.get("turn")) or None, record=True, **extra)
    answer.update(text=got.text or "", note=got.note or "", latency_ms=round(float(got.latency_ms), 2),
                  memories=[_plain(m) for m in got.memories])
    answer["served_ms"] = round((time.perf_counter() - started) * 1000, 2)
    return answer


def _takes(fn: Callable, name: str) -> bool:
    import inspect

    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _plain(model: Any) -> dict:
    dump = getattr(model, "model_dump", None)
    return dump(mode="json") if dump else dict(model)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


# -- the turn: capture out -----------------------------------------------------------------------
def turn_of(req: dict) -> tuple[dict, list[str]]:
    """The contract's turn (core ``ARS.capture_turn``) from the plugin's request, and what was cut."""
    problems: list[str] = []
    user, bad = clean(req.get("user"), CAPTURE_LIMIT)
    if bad:
        problems.append(f"the user's message: {bad}")
    assistant, bad = clean(req.get("assistant"), CAPTURE_LIMIT)
    if bad:
        problems.append(f"the answer: {bad}")
    tools = []
    for t in req.get("tools") if isinstance(req.get("tools"), list) else []:
        if not isinstance(t, dict):
            continue
        output, _ = clean(t.get("output"), TOOL_OUTPUT_LIMIT)
        exit_code = t.get("exit")
        tool = {"name": _text(t.get("name"))[:200] or "tool", "input": t.get("input") if isinstance(
            t.get("input"), (dict, str)) else {}, "exit": exit_code if isinstance(exit_code, int) else None,
            "output": output}
        if isinstance(t.get("request_id"), str):
            tool["request_id"] = t["request_id"]  # the supervisor's decision on this call (its inbox request)
        tools.append(tool)
    turn = {"user": user, "assistant": assistant, "tools": tools[:200],
            "ts": _text(req.get("ts")) or None, "turn": _text(req.get("turn")) or None}
    return turn, problems


def capture(keeper: Keeper, req: dict) -> dict:
    """One ended turn into memory: ``{"episodes": [ids], "note"}`` once durable."""
    turn, problems = turn_of(req)
    answer: dict = {"episodes": [], "note": ""}
    if problems:
        answer["warn"] = "; ".join(problems)
    if not (turn["user"].strip() or turn["assistant"].strip() or turn["tools"]):
        answer["note"] = "an empty turn: nothing to keep"
        return answer
    ars = keeper.ars()
    if ars is None:
        answer["note"] = f"no ARS state directory at {keeper.state}: the turn is not kept"
        return answer
    fn = getattr(ars, "capture_turn", None)
    if fn is None:
        answer["note"] = _unavailable("per-turn capture (ARS.capture_turn)") + \
            "; `ars ingest ~/.openclaw` keeps the sessions meanwhile"
        return answer
    session = _text(req.get("session")) or "unknown"
    answer["episodes"] = list(fn(AGENT, session, turn))
    return answer


def outcome(keeper: Keeper, req: dict) -> dict:
    """How a held call ran after the supervisor's decision (its inbox request)."""
    request_id = _text(req.get("request_id"))
    if not request_id:
        return {"ok": False, "note": "no request id: nothing to record"}
    ars = keeper.ars()
    if ars is None:
        return {"ok": False, "note": f"no ARS state directory at {keeper.state}"}
    fn = getattr(ars, "inbox_outcome", None)
    if not callable(fn):
        return {"ok": False, "note": _unavailable("record of what a decided call did (ARS.inbox_outcome)")}
    output, _ = clean(req.get("output"), TOOL_OUTPUT_LIMIT)
    exit_code = req.get("exit")
    error = _text(req.get("error"))
    status = exit_code if isinstance(exit_code, int) and not isinstance(exit_code, bool) else (
        "error" if error else "ok")
    if error and not output:
        output = error[:TOOL_OUTPUT_LIMIT]
    episode_id = fn(request_id, status, output, by=f"OpenClaw's after_tool_call ({_text(req.get('tool'))[:60]})")
    return {"ok": episode_id is not None, "episode": episode_id,
            **({} if episode_id else {"note": f"no request {request_id} in the inbox"})}


# -- the memory tools (when ARS holds OpenClaw's memory slot) ---------------------------------
def search(keeper: Keeper, req: dict) -> dict:
    query, bad = clean(req.get("query"), PROMPT_LIMIT)
    if not query.strip():
        return {"text": "memory_search needs a query: the words to look for."}
    ars = keeper.ars()
    if ars is None:
        return {"text": f"no ARS memory at {keeper.state} yet."}
    k = req.get("k")
    k = max(1, min(int(k), memory_answer.MAX_HITS)) if isinstance(k, int) and not isinstance(k, bool) else 5
    answer = {"text": memory_answer.hits(ars.recall(query, k=k), limit=memory_answer.SEARCH_LIMIT)}
    if bad:
        answer["warn"] = f"the query: {bad}"
    return answer


def get(keeper: Keeper, req: dict) -> dict:
    """One page of an episode's whole text (core ``ARS.get``), bounded."""
    episode_id = _text(req.get("episode")).strip()
    if not episode_id:
        return {"text": "memory_get needs an id: one from memory_search (the text after `id`)."}
    ars = keeper.ars()
    if ars is None:
        return {"text": f"no ARS memory at {keeper.state} yet."}
    fn = getattr(ars, "get", None)
    if fn is None:
        return {"text": _unavailable("episode text (ARS.get)")}
    limit, offset = req.get("max_chars"), req.get("offset")
    limit = max(500, min(int(limit), memory_answer.GET_MAX)) if _number(limit) else memory_answer.GET_LIMIT
    offset = max(0, int(offset)) if _number(offset) else 0
    from core.api import BadInput

    try:
        got = fn(episode_id, offset=offset, limit=limit)
    except BadInput as exc:
        return {"text": " ".join(str(exc).split())}
    return {"text": memory_answer.page(got)}


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
